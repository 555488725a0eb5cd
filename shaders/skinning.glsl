// Skinning matrices of every drawn character in one texture: row = instance (character),
// texels 4j .. 4j+3 = the columns of joint j's matrix. One instanced draw covers the crowd.
uniform sampler2D skin_texture;
mat4 joint_matrix(int joint) {
    int x = 4 * joint;
    return mat4(texelFetch(skin_texture, ivec2(x, gl_InstanceID), 0), texelFetch(skin_texture, ivec2(x + 1, gl_InstanceID), 0),
                texelFetch(skin_texture, ivec2(x + 2, gl_InstanceID), 0), texelFetch(skin_texture, ivec2(x + 3, gl_InstanceID), 0));
}
mat4 skin_matrix(vec4 joints, vec4 weights) {
    return weights.x * joint_matrix(int(joints.x)) + weights.y * joint_matrix(int(joints.y))
         + weights.z * joint_matrix(int(joints.z)) + weights.w * joint_matrix(int(joints.w));
}
