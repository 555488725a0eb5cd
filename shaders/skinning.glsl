// Skinning matrices of every drawn character in one texture: row = instance (character),
// texels 4j .. 4j+3 = the columns of joint j's matrix. One instanced draw covers the crowd.
// A draw of instances k = 0, 1, ... shows characters first_character + k.
uniform sampler2D skin_texture;
uniform int first_character;
mat4 joint_matrix(int joint) {
    ivec2 texel = ivec2(4 * joint, first_character + gl_InstanceID);
    return mat4(texelFetch(skin_texture, texel, 0), texelFetch(skin_texture, texel + ivec2(1, 0), 0),
                texelFetch(skin_texture, texel + ivec2(2, 0), 0), texelFetch(skin_texture, texel + ivec2(3, 0), 0));
}
mat4 skin_matrix(vec4 joints, vec4 weights) {
    // Influences are sorted by weight, so a rigid part's vertices fetch one matrix, not four
    // (in software rendering the fetches are most of a crowd's vertex cost).
    mat4 skin = weights.x * joint_matrix(int(joints.x));
    if (weights.y > 0.0) {
        skin += weights.y * joint_matrix(int(joints.y));
        if (weights.z > 0.0) {
            skin += weights.z * joint_matrix(int(joints.z));
            if (weights.w > 0.0) {
                skin += weights.w * joint_matrix(int(joints.w));
            }
        }
    }
    return skin;
}
