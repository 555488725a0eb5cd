#version 330
// #include skinning.glsl
uniform mat4 light_matrix;
in vec3 in_position;
in vec4 in_joints;
in vec4 in_weights;
void main() {
    gl_Position = light_matrix * skin_matrix(in_joints, in_weights) * vec4(in_position, 1.0);
}
