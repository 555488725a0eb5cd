#version 330
// A screen-space rectangle in pixels (x, y, width, height; y down), textured.
uniform vec4 rectangle;
uniform vec2 screen_size;
in vec2 in_corner;
out vec2 uv;
void main() {
    uv = vec2(in_corner.x, in_corner.y);
    vec2 pixel = rectangle.xy + in_corner * rectangle.zw;
    vec2 ndc = vec2(pixel.x / screen_size.x * 2.0 - 1.0, 1.0 - pixel.y / screen_size.y * 2.0);
    gl_Position = vec4(ndc, 0.0, 1.0);
}
