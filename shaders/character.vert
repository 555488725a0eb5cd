#version 330
// #include skinning.glsl
uniform mat4 view_projection;
uniform mat4 light_matrix;   // orthographic: light-space coordinates interpolate exactly
in vec3 in_position;
in vec3 in_normal;
in vec4 in_joints;
in vec4 in_weights;
out vec3 world_normal;
out vec3 light_coords;
void main() {
    mat4 skin = skin_matrix(in_joints, in_weights);
    vec4 position = skin * vec4(in_position, 1.0);
    light_coords = (light_matrix * position).xyz * 0.5 + 0.5;
    world_normal = mat3(skin) * in_normal;
    gl_Position = view_projection * position;
}
