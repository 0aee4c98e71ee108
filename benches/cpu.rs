//! `cargo bench`: the CPU side of vkskin on the bundled figure. Parsing, clip sampling, palettes and
//! CPU skinning (the reference the GPU is tested against, and the tutorials' software skinning).

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use glam::{Affine3A, Mat4};
use vkskin::anim::{local_to_model, palette, skin_vertex, JointPose};
use vkskin::formats::{load_model, md5};
use vkskin::render::reference::{cpu_skin_instances, skin_packed};
use vkskin::render::shader_types::SkinnedVertex;

fn assets() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets"))
}

fn parsing(c: &mut Criterion) {
    let mesh_text = std::fs::read_to_string(assets().join("figure.md5mesh")).expect("bundled mesh");
    let anim_text = std::fs::read_to_string(assets().join("figure_walk.md5anim")).expect("bundled anim");
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(mesh_text.len() as u64));
    group.bench_function("md5mesh 619 KB", |b| b.iter(|| md5::parse_mesh(black_box(&mesh_text), Path::new("figure.md5mesh"))));
    group.throughput(Throughput::Bytes(anim_text.len() as u64));
    group
        .bench_function("md5anim 27 KB", |b| b.iter(|| md5::parse_anim(black_box(&anim_text), Path::new("figure_walk.md5anim"))));
    group.finish();
}

fn animation(c: &mut Criterion) {
    let path = assets().join("figure.md5mesh");
    let model = load_model(&path, &[assets().join("figure_walk.md5anim")]).expect("bundled model");
    let animation = &model.animations[0];
    let joints = model.skeleton.len();
    let mut poses = vec![JointPose::IDENTITY; joints];
    let mut models = vec![Mat4::IDENTITY; joints];
    let mut matrices = vec![Mat4::IDENTITY; joints];

    let mut group = c.benchmark_group("animate");
    group.throughput(Throughput::Elements(joints as u64));
    group.bench_function("sample the keys (per joint)", |b| {
        b.iter(|| animation.sample(&model.skeleton, black_box(0.73), &mut poses))
    });
    group.bench_function("compose and palette (per joint)", |b| {
        b.iter(|| {
            local_to_model(&model.skeleton, black_box(&poses), Mat4::IDENTITY, &mut models);
            palette(&model.skeleton, &models, &mut matrices)
        })
    });
    group.finish();

    animation.sample(&model.skeleton, 0.73, &mut poses);
    local_to_model(&model.skeleton, &poses, Mat4::IDENTITY, &mut models);
    palette(&model.skeleton, &models, &mut matrices);
    let mut group = c.benchmark_group("cpu skinning");
    group.throughput(Throughput::Elements(model.vertices.len() as u64));
    group.bench_function("all vertices of one instance (per vertex)", |b| {
        b.iter(|| {
            for vertex in &model.vertices {
                let influences = model.influences_of(vertex);
                black_box(skin_vertex(
                    black_box(&matrices),
                    vertex.position,
                    vertex.normal,
                    vertex.tangent.truncate(),
                    influences,
                ));
            }
        })
    });
    // The `cpu` strategy's loop: the same maths in glam's SIMD affine type, packed as the GPU packs.
    let affine: Vec<Affine3A> = matrices.iter().map(|&matrix| Affine3A::from_mat4(matrix)).collect();
    let mut out = vec![SkinnedVertex { position: [0.0; 3], normal: [0; 4], tangent: [0; 4] }; model.vertices.len()];
    group.bench_function("cpu strategy: skinned and packed (per vertex)", |b| {
        b.iter(|| skin_packed(&model, &model.vertices, black_box(&affine), &mut out))
    });
    group.throughput(Throughput::Elements(model.influences.len() as u64));
    group.bench_function("cpu strategy: skinned and packed (per influence)", |b| {
        b.iter(|| skin_packed(&model, &model.vertices, black_box(&affine), &mut out))
    });
    // The same loop with every vertex given four influences (its own, then its first again at weight
    // 0), as the C++ figure in docs/passes.md counts them: the cost of the influences against the fixed
    // part of a vertex (a tangent, two normalizations, packing).
    let mut four = model.clone();
    four.influences.clear();
    for vertex in &mut four.vertices {
        let own = model.influences_of(vertex).to_vec();
        let first = four.influences.len() as u32;
        four.influences.extend_from_slice(&own);
        for _ in own.len()..4 {
            four.influences.push(vkskin::anim::Influence { weight: 0.0, ..own[0] });
        }
        vertex.first_influence = first;
        vertex.influence_count = own.len().max(4) as u32;
    }
    group.throughput(Throughput::Elements(four.vertices.len() as u64));
    group.bench_function("cpu strategy: 4 influences a vertex (per vertex)", |b| {
        b.iter(|| skin_packed(&four, &four.vertices, black_box(&affine), &mut out))
    });
    // The whole `cpu` strategy for 64 walking instances (sampling, blending and palettes included),
    // on one thread and on two: how it scales over this machine's two cores. Into one output, as the
    // renderer skins into its frame slot's mapped buffer.
    let setup = vkskin::app::SceneSetup::new(model.clone(), 64);
    let scene = setup.frame(0.5, 16.0 / 9.0);
    let instances = setup.instance_data(scene.seconds);
    let all = vec![model.vertices.len() as u32; instances.len()];
    let mut out = vec![SkinnedVertex { position: [0.0; 3], normal: [0; 4], tangent: [0; 4] }; model.vertices.len() * all.len()];
    group.throughput(Throughput::Elements((model.vertices.len() * instances.len()) as u64));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool");
        group.bench_function(format!("cpu strategy, 64 instances, {threads} thread(s) (per vertex)"), |b| {
            b.iter(|| {
                pool.install(|| {
                    cpu_skin_instances((&[&model], &[]), black_box(&instances), &scene.morph_overrides, &all, &mut out, None)
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, parsing, animation);
criterion_main!(benches);
