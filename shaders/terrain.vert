#version 330
uniform mat4 view_projection;
in vec3 in_position;
in vec3 in_normal;
in float in_ao;
in float in_sun;
out vec3 world_position;
out vec3 world_normal;
out float ao;
out float sun;
void main() {
    world_position = in_position;
    world_normal = in_normal;
    ao = in_ao;
    sun = in_sun;
    gl_Position = view_projection * vec4(in_position, 1.0);
}
