#version 330
uniform mat4 light_matrix;
uniform mat4 joints[31];
in vec3 in_position;
in vec4 in_joints;
in vec4 in_weights;
void main() {
    mat4 skin = in_weights.x * joints[int(in_joints.x)] + in_weights.y * joints[int(in_joints.y)]
              + in_weights.z * joints[int(in_joints.z)] + in_weights.w * joints[int(in_joints.w)];
    gl_Position = light_matrix * skin * vec4(in_position, 1.0);
}
