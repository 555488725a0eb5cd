#version 330
// #include skinning.glsl
uniform mat4 view_projection;
in vec3 in_position;
in vec3 in_normal;
in vec4 in_joints;
in vec4 in_weights;
out vec3 world_position;
out vec3 world_normal;
void main() {
    mat4 skin = skin_matrix(in_joints, in_weights);
    vec4 position = skin * vec4(in_position, 1.0);
    world_position = position.xyz;
    world_normal = mat3(skin) * in_normal;
    gl_Position = view_projection * position;
}
