#version 330
// #include common_lighting.glsl
in vec3 world_normal;
in vec3 light_coords;
in vec4 base_colour;
in vec2 texcoord;
uniform sampler2D base_texture;
uniform bool textured;
out vec4 colour;
void main() {
    vec3 n = normalize(world_normal);
    float shadow = shadow_lookup(light_coords, n);
    float ao = 0.6 + 0.4 * clamp(n.y * 0.5 + 0.5, 0.0, 1.0);
    // glTF's base colour factor is linear, its textures sRGB.
    vec3 albedo = base_colour.rgb;
    if (textured) {
        albedo *= to_linear(texture(base_texture, texcoord).rgb);
    }
    colour = vec4(shade_linear(albedo, n, ao, shadow), 1.0);
}
