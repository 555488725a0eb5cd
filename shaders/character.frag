#version 330
// #include common_lighting.glsl
in vec3 world_normal;
in vec3 light_coords;
uniform vec3 albedo;
out vec4 colour;
void main() {
    vec3 n = normalize(world_normal);
    float shadow = shadow_lookup(light_coords, n);
    // Soft wrap-around ambient so the lower body is not black.
    float ao = 0.6 + 0.4 * clamp(n.y * 0.5 + 0.5, 0.0, 1.0);
    colour = vec4(shade(albedo, n, ao, shadow), 1.0);
}
