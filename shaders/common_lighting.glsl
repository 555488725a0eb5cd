// Shared lighting: sRGB albedo is lit in linear space and written back as sRGB
// (the original raised the final colour to the power 2.2, which darkens; this does not).
uniform vec3 light_dir;            // direction the light travels (unit)
uniform sampler2DShadow shadow_map;
uniform mat4 light_matrix;         // world -> light clip space

// The lit share of a point at light-space `coords` (x, y in [0, 1] on the map, z the depth).
float shadow_lookup(vec3 coords, vec3 normal) {
    if (coords.x < 0.0 || coords.x > 1.0 || coords.y < 0.0 || coords.y > 1.0 || coords.z > 1.0) {
        return 1.0;
    }
    // Slope-scaled bias against acne. The comparison sampler filters linearly: each lookup is
    // percentage-closer filtering over 2x2 texels, which with a map of about 0.4 units per texel
    // gives a soft edge for one tap (llvmpipe pays for every tap on the whole screen).
    float bias = 0.0006 + 0.0015 * (1.0 - abs(dot(normal, -light_dir)));
    return texture(shadow_map, vec3(coords.xy, coords.z - bias));
}

float shadow_factor(vec3 world_position, vec3 normal) {
    vec4 light_clip = light_matrix * vec4(world_position, 1.0);
    return shadow_lookup(light_clip.xyz / light_clip.w * 0.5 + 0.5, normal);
}

vec3 to_linear(vec3 srgb) { return pow(srgb, vec3(2.2)); }
vec3 to_srgb(vec3 linear) { return pow(clamp(linear, 0.0, 1.0), vec3(1.0 / 2.2)); }

// Light colours and floors come from pfnn_demo/app/render/lighting.py (the terrain bakes with them).
uniform vec3 sun_colour;
uniform vec3 sky_colour;
uniform float shadow_floor;     // share of direct light left in shadow (sky bounce)
uniform float ambient_floor;    // share of sky light left where fully occluded

// Lit colour (sRGB) of a surface of linear albedo.
vec3 shade_linear(vec3 albedo, vec3 normal, float ao, float shadow) {
    float diffuse = max(dot(-light_dir, normal), 0.0) * (shadow_floor + (1.0 - shadow_floor) * shadow);
    vec3 sky = sky_colour * (ambient_floor + (1.0 - ambient_floor) * ao);
    return to_srgb(albedo * (sun_colour * diffuse + sky));
}

vec3 shade(vec3 albedo_srgb, vec3 normal, float ao, float shadow) {
    return shade_linear(to_linear(albedo_srgb), normal, ao, shadow);
}
