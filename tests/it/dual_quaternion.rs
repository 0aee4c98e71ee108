//! Dual-quaternion skinning (issue 30): the twisted cylinder keeps its volume where linear
//! blending collapses it; the GPU's dual quaternions equal the CPU reference's in the `compute` and
//! `cpu` strategies, and `vertex` draws `compute`'s image; a rigidly bound model looks the same in
//! both modes; joints with a uniform scale blend as dual quaternions, joints that stretch unevenly
//! fall back to linear; files with scale keys skin alike on the GPU and the CPU.

use glam::{Vec3, Vec4};
use vkskin::anim::{Channel, Interpolation, KeyTimes, Property, Skinning};
use vkskin::app::imagediff::LargestDifference;
use vkskin::app::{HeadlessRenderer, SceneSetup};
use vkskin::formats::load_model;
use vkskin::generate::twist::{enclosed_volume, twisted_cylinder};
use vkskin::model::Model;
use vkskin::render::reference::reference_skinning;
use vkskin::render::{FrameScene, Strategy};

use crate::common::{assert_no_validation_messages, default_model, shared_models, validated_device, DIRECTION_TOLERANCE};

/// Every instance of `setup` set to `skinning`.
fn all(setup: &mut SceneSetup, skinning: Skinning) {
    for instance in &mut setup.instances {
        instance.skinning = skinning;
    }
}

/// Renders `scene` with `strategy` and holds every vertex of every instance to the CPU reference:
/// positions within 1e-5 of the extent, directions within twice a snorm16 rounding (a dual
/// quaternion's rotation is rebuilt from its matrix, a square root and a division, and the GPU
/// turns the vertex by another formula than glam's: up to 3.7e-5 on the cylinder). Returns the
/// skinned positions, instance after instance.
fn held_to_the_reference(setup: &SceneSetup, scene: &FrameScene, strategy: Strategy) -> Vec<Vec3> {
    let device = validated_device();
    let mut headless = HeadlessRenderer::with_strategy(&device, setup, (96, 96), strategy).expect("renderer");
    headless.render(scene).expect("frame");
    let skinned = headless.renderer.read_back_skinned().expect("read back");
    assert_no_validation_messages(&device);
    let (model, extent) = (&setup.model, setup.model.extent());
    let vertex_count = model.vertices.len();
    for (instance, data) in scene.instance_data(model).iter().enumerate() {
        for (vertex, expected) in reference_skinning(model, data, &scene.morph_overrides).iter().enumerate() {
            let found = skinned[instance * vertex_count + vertex];
            let error = Vec3::from_array(found.position).distance(expected.position);
            assert!(
                error <= 1e-5 * extent,
                "{} {}: instance {instance} vertex {vertex}: {error:e} (extent {extent})",
                model.name,
                strategy.name()
            );
            let (normal, tangent) = (found.normal().distance(expected.normal), found.tangent().distance(expected.tangent));
            assert!(
                normal <= 2.0 * DIRECTION_TOLERANCE && tangent <= 2.0 * DIRECTION_TOLERANCE,
                "{} {}: instance {instance} vertex {vertex}: normal {normal:e}, tangent {tangent:e}",
                model.name,
                strategy.name()
            );
        }
    }
    skinned.iter().map(|vertex| Vec3::from_array(vertex.position)).collect()
}

/// The candy wrapper, measured: at the end of its half-turn (179.6°) the cylinder keeps at least
/// 95 % of its rest volume under dual quaternions, where linear blending loses most of it; both
/// strategies that keep skinned vertices equal the CPU reference.
#[test]
fn a_half_twist_keeps_its_volume_with_dual_quaternions_and_collapses_with_linear_blending() {
    let model = twisted_cylinder(false);
    let rest: Vec<Vec3> = model.vertices.iter().map(|vertex| vertex.position).collect();
    let rest_volume = enclosed_volume(&rest, &model.indices);
    let indices = model.indices.clone();
    let vertex_count = model.vertices.len();
    let mut setup = SceneSetup::new(model, 1);
    setup.play(0, 0.0, 0.0);
    let mut kept = Vec::new();
    for skinning in Skinning::ALL {
        all(&mut setup, skinning);
        let scene = setup.frame(0.998, 1.0);
        for strategy in [Strategy::Compute, Strategy::Cpu] {
            let positions = held_to_the_reference(&setup, &scene, strategy);
            let volume = enclosed_volume(&positions[..vertex_count], &indices);
            println!("{} ({}): {:.1} % of the rest volume", skinning.name(), strategy.name(), 100.0 * volume / rest_volume);
            kept.push((skinning, volume / rest_volume));
        }
    }
    for (skinning, share) in kept {
        match skinning {
            Skinning::DualQuaternion => assert!(share >= 0.95, "dual quaternions keep {share}"),
            Skinning::Linear => assert!(share < 0.75, "linear blending collapses the middle: {share}"),
        }
    }
}

/// The bundled figure, three instances (one of them crossfading) with dual quaternions and one
/// without, mid-walk: `compute` and `cpu` equal the reference. The `vertex` strategy draws the
/// twisting cylinder as `compute` does with dual quaternions, and far from its own linear image.
#[test]
fn every_strategy_skins_dual_quaternions_as_the_cpu_reference() {
    let mut setup = SceneSetup::new(default_model(), 4);
    setup.play(0, 0.0, 0.0);
    setup.instances[2].switch_clip(1, 0.5, 1.0);
    all(&mut setup, Skinning::DualQuaternion);
    setup.instances[3].skinning = Skinning::Linear;
    let scene = setup.frame(0.9, 1.0);
    for strategy in [Strategy::Compute, Strategy::Cpu] {
        held_to_the_reference(&setup, &scene, strategy);
    }
    let mut images = Vec::new();
    for (strategy, skinning) in [
        (Strategy::Compute, Skinning::DualQuaternion),
        (Strategy::Vertex, Skinning::DualQuaternion),
        (Strategy::Vertex, Skinning::Linear),
    ] {
        let mut one = SceneSetup::new(twisted_cylinder(false), 1);
        one.play(0, 0.0, 0.0);
        one.instances[0].phase = 0.0;
        all(&mut one, skinning);
        let device = validated_device();
        let mut headless = HeadlessRenderer::with_strategy(&device, &one, (240, 180), strategy).expect("renderer");
        images.push(headless.render(&one.frame(0.9, headless.aspect())).expect("frame"));
        assert_no_validation_messages(&device);
    }
    let same = LargestDifference::between(&images[0], &images[1]);
    println!("vertex vs compute, dual quaternions: {} of {} pixels far, mean {:.3}", same.far, same.pixels, same.mean);
    assert!(same.far * 200 <= same.pixels && same.mean < 1.0);
    let modes = LargestDifference::between(&images[1], &images[2]);
    println!("vertex, dual quaternions vs linear: {} pixels far", modes.far);
    assert!(modes.far > 500, "the vertex strategy's shaders blend dual quaternions: the waist stays round");
}

/// A rigidly bound model (every vertex one joint) looks the same in both modes, within the
/// strategies tolerance: the hard-weighted cylinder twisting, and the Milkshape ninja walking.
#[test]
fn a_rigidly_bound_model_looks_the_same_in_both_modes() {
    let mut models: Vec<Model> = vec![twisted_cylinder(true)];
    if let Some(folder) = shared_models("ms3d/ninja") {
        models.push(load_model(&folder.join("ninja.ms3d"), &[]).expect("loads"));
    }
    for model in models {
        assert_eq!(model.stats.max_influences, if model.name.contains("cylinder") { 2 } else { 1 });
        let mut images = Vec::new();
        let mut setup = SceneSetup::new(model, 1);
        setup.play(0, 0.0, 0.0);
        for skinning in Skinning::ALL {
            all(&mut setup, skinning);
            let device = validated_device();
            let mut headless = HeadlessRenderer::with_strategy(&device, &setup, (200, 150), Strategy::Compute).expect("renderer");
            images.push(headless.render(&setup.frame(0.6, headless.aspect())).expect("frame"));
            assert_no_validation_messages(&device);
        }
        let difference = LargestDifference::between(&images[0], &images[1]);
        println!("{}: {} of {} pixels far, mean {:.3}", setup.model.name, difference.far, difference.pixels, difference.mean);
        assert!(difference.far * 200 <= difference.pixels && difference.mean < 1.0, "{}", setup.model.name);
    }
}

/// Scale keys: the cylinder's tip scaled uniformly (×1.5) still blends as dual quaternions (the
/// scale applied first); scaled unevenly, every vertex it moves falls back to linear blending. Both
/// equal the CPU reference on the GPU.
#[test]
fn a_uniform_scale_blends_as_dual_quaternions_and_a_stretch_falls_back_to_linear() {
    for (scale, uniform) in [(Vec3::splat(1.5), true), (Vec3::new(1.5, 1.0, 1.0), false)] {
        let mut model = twisted_cylinder(false);
        model.animations[0].channels.push(Channel {
            joint: 1,
            property: Property::Scale,
            interpolation: Interpolation::Linear,
            times: KeyTimes::Listed(vec![0.0, 1.0]),
            mask: 0b0111,
            base: Vec4::ZERO,
            implied_w: false,
            wraps: false,
            values: [Vec3::ONE, scale].iter().flat_map(|scale| scale.to_array()).collect(),
        });
        model.compute_bounds();
        // Two instances at the same time, one in each mode.
        let mut setup = SceneSetup::uniform(model, 2);
        setup.play(0, 0.0, 0.0);
        setup.instances[1].phase = setup.instances[0].phase;
        all(&mut setup, Skinning::DualQuaternion);
        setup.instances[1].skinning = Skinning::Linear;
        let scene = setup.frame(0.7, 1.0);
        let positions = held_to_the_reference(&setup, &scene, Strategy::Compute);
        let vertex_count = setup.model.vertices.len();
        // Each instance's vertices in its own space (the two stand apart).
        let local = |instance: usize, vertex: usize| {
            setup.instances[instance].world().inverse().transform_point3(positions[instance * vertex_count + vertex])
        };
        let differ = (0..vertex_count).filter(|&vertex| local(0, vertex).distance(local(1, vertex)) > 1e-4).count();
        let blended = setup.model.vertices.iter().filter(|vertex| vertex.influence_count > 1).count();
        println!(
            "tip scaled by {scale}: {differ} of {vertex_count} vertices differ between the modes ({blended} blend two joints)"
        );
        if uniform {
            assert!(differ * 2 > blended, "a uniformly scaled tip still blends as dual quaternions");
        } else {
            assert_eq!(differ, 0, "every vertex the stretched tip moves blends linearly, as the linear instance's");
        }
    }
}

/// Files with scale keys (CesiumMan's 912, the Max skin's, the Quaternius man's 64 a clip):
/// dual-quaternion skinning on the GPU equals the CPU reference, fallbacks included.
#[test]
fn files_with_scale_keys_skin_dual_quaternions_as_the_reference() {
    let files = [
        ("gltf", "CesiumMan/CesiumMan.glb"),
        ("fbx", "MaxSkin/max_transformed_skin_7500_binary.fbx"),
        ("fbx", "QuaterniusMan/Male_Casual.fbx"),
    ];
    for (folder, file) in files {
        let Some(folder) = shared_models(folder) else { continue };
        let model = load_model(&folder.join(file), &[]).unwrap_or_else(|error| panic!("{file}: {error}"));
        let mut setup = SceneSetup::new(model, 1);
        setup.play(0, 0.0, 0.0);
        all(&mut setup, Skinning::DualQuaternion);
        let scene = setup.frame(0.4, 1.0);
        let palette = vkskin::render::reference::reference_palette(&setup.model, &scene.instance_data(&setup.model)[0]);
        let stretched = palette.iter().filter(|matrix| !vkskin::anim::DualQuaternion::from_affine(matrix).rigid).count();
        println!("{file}: {stretched} of {} joints stretch at 0.4 s (their vertices blend linearly)", palette.len());
        held_to_the_reference(&setup, &scene, Strategy::Compute);
    }
}

/// The culling boxes hold dual-quaternion vertices, which leave the hull of their joints' images
/// (the cull pass grows such an instance's box by the blend reach): the twisting cylinder and the
/// walking figure, 40 times over their first clip.
#[test]
fn culling_boxes_hold_dual_quaternion_vertices() {
    use vkskin::anim::Playback;
    use vkskin::render::passes::cull::animated_box;
    use vkskin::render::shader_types::InstanceData;
    for model in [twisted_cylinder(false), default_model()] {
        let mut state = SceneSetup::new(model.clone(), 1).instances[0];
        state.skinning = Skinning::DualQuaternion;
        let duration = model.animations[0].duration;
        let tolerance = 1e-5 * model.extent();
        for step in 0..40 {
            let time = duration * step as f32 / 39.0;
            let data = InstanceData::of(&state, &Playback { a: Some((0, time)), ..Playback::default() });
            let bounds = animated_box(&model, &data, false);
            for (vertex, skinned) in reference_skinning(&model, &data, &[]).iter().enumerate() {
                let local = state.world().inverse().transform_point3(skinned.position);
                let inside = local.cmpge(bounds.min - Vec3::splat(tolerance)).all()
                    && local.cmple(bounds.max + Vec3::splat(tolerance)).all();
                assert!(inside, "{}: vertex {vertex} at {time} s: {local:?} outside {bounds:?}", model.name);
            }
        }
    }
}
