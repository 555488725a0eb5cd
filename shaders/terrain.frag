#version 330
// #include common_lighting.glsl
// Static light (sun cosine times baked terrain self-shadowing, and ambient occlusion) comes
// per vertex; per fragment only the checkerboard and, near the character, its shadow and the
// contact darkening under its feet.
in vec3 world_position;
in vec3 world_normal;
in float ao;
in float sun;
uniform vec3 foot_positions[4];    // left heel, left toe, right heel, right toe
uniform vec3 hip_position;
out vec4 colour;
const float SHADOW_REACH = 220.0;   // the character's shadow lies within this of its hips
const float CONTACT_REACH = 120.0;  // contact darkening: feet within this, the body within 65
float segment_distance(vec3 p, vec3 a, vec3 b) {
    vec3 ab = b - a;
    float t = clamp(dot(p - a, ab) / max(dot(ab, ab), 1e-6), 0.0, 1.0);
    return length(p - (a + t * ab));
}
void main() {
    // Checkerboard of 50 x 50 squares, as the original; albedo 0.85 or 0.8075 (sRGB).
    vec2 square = floor(fract(world_position.xz / 100.0) + 0.5);
    float dark = clamp(mod(square.x + square.y, 2.0) + 0.95, 0.0, 1.0);
    float albedo = dark < 1.0 ? 0.6245 : 0.6994;   // the two albedos in linear space
    float shadow = 1.0;
    float occlusion = ao;
    float from_hip = length(hip_position.xz - world_position.xz);
    if (from_hip < SHADOW_REACH) {
        shadow = shadow_factor(world_position, normalize(world_normal));
    }
    if (from_hip < CONTACT_REACH) {
        float feet = clamp(segment_distance(world_position, foot_positions[0], foot_positions[1]) / 10.0 + 0.25, 0.0, 1.0)
                   * clamp(segment_distance(world_position, foot_positions[2], foot_positions[3]) / 10.0 + 0.25, 0.0, 1.0);
        occlusion *= feet * clamp((from_hip + 200.0) / 265.0, 0.0, 1.0);
    }
    vec3 light = SUN * sun * (SHADOW_FLOOR + (1.0 - SHADOW_FLOOR) * shadow)
               + SKY * (AMBIENT_FLOOR + (1.0 - AMBIENT_FLOOR) * occlusion);
    colour = vec4(to_srgb(albedo * light), 1.0);
}
