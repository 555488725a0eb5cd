#version 330
// The terrain's light is static (a fixed sun, baked self-shadowing and ambient occlusion): it
// arrives per vertex in sRGB, once lit and once in the character's shadow (app/render/lighting.py).
uniform mat4 view_projection;
uniform mat4 light_matrix;   // an orthographic light: its coordinates interpolate exactly across a triangle
in vec3 in_position;
in vec3 in_lit;
in vec3 in_shadowed;
out vec3 world_position;
out vec3 lit_srgb;
out vec3 shadowed_srgb;
out vec3 light_coords;
void main() {
    light_coords = (light_matrix * vec4(in_position, 1.0)).xyz * 0.5 + 0.5;
    world_position = in_position;
    lit_srgb = in_lit;
    shadowed_srgb = in_shadowed;
    gl_Position = view_projection * vec4(in_position, 1.0);
}
