// Where instance `instance` skins from (skinning.glsl: SkinSource), for the vertex shaders that
// skin (the `vertex` strategy's, and forward.vert's previous positions): its model's record and
// its slot. The includer declares models[] and instance_slots[] and includes skinning.glsl first.
SkinSource instance_skin_source(uint instance, uint chunk_instances) {
    uint model = instance_slots[instance].model;
    return SkinSource(models[model].first_vertex, models[model].first_target, models[model].joint_count,
                      models[model].palette_stride, instance / chunk_instances, instance_slots[instance].palette_base);
}
