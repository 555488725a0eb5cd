#version 330
uniform mat4 view_projection;
uniform mat4 joints[31];
in vec3 in_position;
in vec3 in_normal;
in vec4 in_joints;
in vec4 in_weights;
out vec3 world_position;
out vec3 world_normal;
void main() {
    mat4 skin = in_weights.x * joints[int(in_joints.x)] + in_weights.y * joints[int(in_joints.y)]
              + in_weights.z * joints[int(in_joints.z)] + in_weights.w * joints[int(in_joints.w)];
    vec4 position = skin * vec4(in_position, 1.0);
    world_position = position.xyz;
    world_normal = mat3(skin) * in_normal;
    gl_Position = view_projection * position;
}
