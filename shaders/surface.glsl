// A surface's lit colour, as forward.frag and the raster resolve (raster_resolve.frag) both shade
// it: the same colour whichever rasterizer found the sample. Needs frame.glsl and lighting.glsl first.

// frame.chunking.y's bit for the raster debug view: what each rasterizer drew, in its colour.
const uint DEBUG_RASTER = 1u;
const vec3 HARDWARE_COLOR = vec3(0.15, 0.45, 1.0);
const vec3 COMPUTE_COLOR = vec3(1.0, 0.55, 0.1);

// `albedo`: the material's factor × its texture × the vertex colour; `tint`: the instance's (rgb a
// hue, a how far toward it); `normal` and `tangent` interpolated (tangent.w the bitangent's sign);
// `mapped`: the normal map's sample in [-1, 1]; `front_facing`: the side of the triangle we see.
vec3 shade_surface(vec4 albedo, vec4 tint, vec3 normal, vec4 tangent, vec3 mapped, bool front_facing, vec3 world) {
    // A crowd's colours: the surface's hue moved toward the instance's tint with its brightness
    // kept, the more so the more saturated it is (cloth moves, skin and greys less).
    const vec3 LUMA = vec3(0.2126, 0.7152, 0.0722);
    vec3 toward = tint.rgb * (dot(albedo.rgb, LUMA) / max(dot(tint.rgb, LUMA), 1e-4));
    float brightest = max(albedo.r, max(albedo.g, albedo.b));
    float saturation = (brightest - min(albedo.r, min(albedo.g, albedo.b))) / max(brightest, 1e-4);
    albedo.rgb = mix(albedo.rgb, toward, tint.a * saturation);
    vec3 n = normalize(normal);
    vec3 t = tangent.xyz - n * dot(n, tangent.xyz);
    if (dot(t, t) > 1e-8) {
        t = normalize(t);
        vec3 b = cross(n, t) * (tangent.w < 0.0 ? -1.0 : 1.0);
        n = normalize(mat3(t, b, n) * mapped);
    }
    // The side we see may be a back face: either side of a two-sided model (open, or wound both ways:
    // Model::facing), and every visible face of an inward-wound one. Normals computed from the
    // winding point away from such a face, so light the side we see.
    n = front_facing ? n : -n;
    return shade(albedo.rgb, n, world);
}
