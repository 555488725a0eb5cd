#version 330
uniform mat4 view_projection;
uniform float point_size;
in vec3 in_position;
in vec3 in_colour;
out vec3 colour;
void main() {
    colour = in_colour;
    gl_PointSize = point_size;
    gl_Position = view_projection * vec4(in_position, 1.0);
}
