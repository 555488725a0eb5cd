#version 330
// #include common_lighting.glsl
// Per fragment: the checkerboard and, on tiles near the player (compiled with NEAR_CHARACTER 1),
// its shadow (blending the per-vertex lit and shadowed light) and the contact darkening under
// its feet and body; on tiles where only other characters' shadows fall (NEAR_CHARACTER 2), the
// shadow alone. Programs rather than branches: software rasterisers pay for every branch of a
// shader on every pixel. No powers per fragment either.
in vec3 world_position;
in vec3 lit_srgb;
in vec3 shadowed_srgb;
in vec3 light_coords;
uniform vec3 foot_positions[4];    // left heel, left toe, right heel, right toe
uniform vec3 hip_position;
out vec4 colour;
float segment_distance(vec3 p, vec3 a, vec3 b) {
    vec3 ab = b - a;
    float t = clamp(dot(p - a, ab) / max(dot(ab, ab), 1e-6), 0.0, 1.0);
    return length(p - (a + t * ab));
}
void main() {
    // Checkerboard of 50 x 50 squares, as the original: albedo 0.85 or 0.8075 (sRGB).
    vec2 square = floor(fract(world_position.xz / 100.0) + 0.5);
    float albedo = mod(square.x + square.y, 2.0) < 0.5 ? 0.8075 : 0.85;
#if NEAR_CHARACTER == 1
    float shadow = shadow_lookup(light_coords, vec3(0.0, 1.0, 0.0));
    // Contact darkening as the original (0.25 at the feet, none 7.5 away; the body's 0.75 under the hips).
    float contact = clamp(segment_distance(world_position, foot_positions[0], foot_positions[1]) / 10.0 + 0.25, 0.0, 1.0)
                  * clamp(segment_distance(world_position, foot_positions[2], foot_positions[3]) / 10.0 + 0.25, 0.0, 1.0)
                  * clamp((length(hip_position.xz - world_position.xz) + 200.0) / 265.0, 0.0, 1.0);
    vec3 light = mix(shadowed_srgb, lit_srgb, shadow) * mix(0.55, 1.0, contact);
#elif NEAR_CHARACTER == 2
    vec3 light = mix(shadowed_srgb, lit_srgb, shadow_lookup(light_coords, vec3(0.0, 1.0, 0.0)));
#else
    vec3 light = lit_srgb;
#endif
    colour = vec4(albedo * light, 1.0);
}
