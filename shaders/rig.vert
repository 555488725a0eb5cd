#version 330
// A user's rig: skinned like the mannequin, with a colour per vertex (its material's base
// colour) and texture coordinates for a base colour texture.
// #include skinning.glsl
uniform mat4 view_projection;
uniform mat4 light_matrix;
in vec3 in_position;
in vec3 in_normal;
in vec4 in_joints;
in vec4 in_weights;
in vec4 in_colour;
in vec2 in_texcoord;
out vec3 world_normal;
out vec3 light_coords;
out vec4 base_colour;
out vec2 texcoord;
void main() {
    mat4 skin = skin_matrix(in_joints, in_weights);
    vec4 position = skin * vec4(in_position, 1.0);
    light_coords = (light_matrix * position).xyz * 0.5 + 0.5;
    world_normal = mat3(skin) * in_normal;
    base_colour = in_colour;
    texcoord = in_texcoord;
    gl_Position = view_projection * position;
}
