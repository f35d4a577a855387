//! stridex inside a Burn program: the same op launched on device buffers, applied at once to
//! Burn's `CubeTensor`s (`apply_cube`, the unfused `CubeBackend`'s primitive: shape and dtype
//! checks, the output's allocation, a `CubeTensor` back), and applied to Burn 0.22.1 `Tensor`s
//! (`apply`, where the op is registered in Burn's fusion stream as a custom operation), beside
//! Burn's own `Tensor` ops in that stream. What dropping stridex into a Burn program costs over
//! bare buffers, and what it gains over Burn's ops.

use crate::measure::{check, median, read, sync, upload, Env};
use burn::tensor::{s, DType, IndexingUpdateOp, Int, Shape, Tensor, TensorData};
use half::f16;
use stridex::burn::burn_cubecl::tensor::CubeTensor;
use stridex::cubecl::server::Handle;
use stridex::Operand;

pub struct InteropOutcome {
    pub case: &'static str,
    /// Bytes the op reads and writes (as the headline cases count them).
    pub bytes: usize,
    /// Seconds per synced call: the op on device buffers, `apply_cube` on `CubeTensor`s,
    /// `apply` in the fusion stream, and Burn's own ops in the fusion stream.
    pub buffers: f64,
    pub cube: f64,
    pub fused: f64,
    pub burn: f64,
    pub burn_ops: &'static str,
}

pub fn all(env: &Env) -> Vec<InteropOutcome> {
    [Some(embedding(env)), Some(last_position(env)), kv_cache(env)].into_iter().flatten().collect()
}

fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_to_vec::<f32>().expect("f32 values")
}

/// Burn tensors of `values` and `ids` on the run's Burn device.
fn tensors<const D: usize, const DI: usize>(
    env: &Env,
    values: &[f32],
    shape: [usize; D],
    ids: &[i32],
    id_shape: [usize; DI],
) -> (Tensor<D>, Tensor<DI, Int>) {
    let t = Tensor::<D>::from_data(TensorData::new(values.to_vec(), shape), &env.device);
    let i = Tensor::<DI, Int>::from_data(TensorData::new(ids.to_vec(), id_shape), &env.device);
    (t, i)
}

/// A contiguous `CubeTensor` of `shape` on `handle` (a buffer of stridex's client, which is the
/// client Burn's CubeCL device has).
fn cube_tensor(env: &Env, handle: &Handle, shape: &[usize], dtype: DType) -> CubeTensor {
    CubeTensor::new_contiguous(
        env.client.clone(),
        env.cube.clone(),
        Shape::from(shape.to_vec()),
        handle.clone(),
        dtype,
    )
}

/// Times `f` (an `apply_cube`, which launches at once), synced on its output's client; returns
/// the median and the output's first `n` values.
fn time_cube(env: &Env, n: usize, mut f: impl FnMut() -> CubeTensor) -> (f64, Vec<f32>) {
    let mut last = None;
    let t = median(env.settings.reps, || {
        let y = f();
        sync(&y.client);
        last = Some(y);
    });
    let y = last.expect("ran");
    assert!(y.is_contiguous(), "apply_cube returned a strided tensor: {y:?}");
    (t, read(&y.client, &y.handle, n))
}

/// An embedding lookup, the headline gather: one row per id.
fn embedding(env: &Env) -> InteropOutcome {
    let case = "embedding f32[16384,1024] <- i32[16384]";
    let (vocab, dim, n) = (16384, 1024, 16384);
    let table: Vec<f32> = (0..vocab * dim).map(|i| i as f32).collect();
    let ids: Vec<i32> = (0..n).map(|i| ((i * 7919 + 13) % vocab) as i32).collect();
    let expected: Vec<f32> =
        ids.iter().flat_map(|&r| table[r as usize * dim..(r as usize + 1) * dim].to_vec()).collect();
    // `clamp`: under ONNX's `error`, each call would also check the ids (in the stream, by
    // reading them back first), which is not what this compares.
    let op = stridex::gather! { data: f32[16384, 1024], indices: i32[16384], out_of_range: clamp };

    let c = env.client;
    let d = upload(c, &table, op.buffer_bytes(Operand::Data).unwrap());
    let ix = upload(c, &ids, op.buffer_bytes(Operand::Indices).unwrap());
    let o = c.empty(op.buffer_bytes(Operand::Output).unwrap());
    let buffers = env.synced_median(|| {
        op.launch(c, &d, &ix, &o).expect("launch");
    });
    check("on buffers", case, &read::<f32>(c, &o, n * dim), &expected);

    let (t, i) = (cube_tensor(env, &d, &[vocab, dim], DType::F32), cube_tensor(env, &ix, &[n], DType::I32));
    let (cube, y) = time_cube(env, n * dim, || op.apply_cube(t.clone(), i.clone()).expect("apply_cube"));
    check("apply_cube on CubeTensors", case, &y, &expected);

    let (t, i) = tensors(env, &table, [vocab, dim], &ids, [n]);
    let (fused, y) = env.burn(&env.device, || {
        let y: Tensor<2> = op.apply(t.clone(), i.clone()).expect("apply");
        y
    });
    check("apply in the fusion stream", case, &values(y), &expected);
    let (burn, y) = env.burn(&env.device, || t.clone().select(0, i.clone()));
    check("Burn", case, &values(y), &expected);
    InteropOutcome { case, bytes: 2 * n * dim * 4 + n * 4, buffers, cube, fused, burn, burn_ops: "select(0)" }
}

/// A chain, fused: the rows of each sequence's last position only.
fn last_position(env: &Env) -> InteropOutcome {
    let case = "chain: embedding f32[32000,1024] <- i32[32,512], the last position";
    let (vocab, dim, batch, seq) = crate::chains::LAST_POSITION;
    let (table, ids, expected) = crate::chains::last_position_inputs();
    let op = stridex::chain! {
        data: f32[32000, 1024],
        gather { indices: i32[32, 512], axis: 0, out_of_range: clamp },
        slice { rules: onnx, starts: [-1], ends: [512], axes: [1] },
    };

    let c = env.client;
    let d = upload(c, &table, op.buffer_bytes(Operand::Data).unwrap());
    let ix = upload(c, &ids, op.index_buffer_bytes(0).unwrap());
    let o = c.empty(op.buffer_bytes(Operand::Output).unwrap());
    let buffers = env.synced_median(|| {
        op.launch(c, &d, &[&ix], &o).expect("launch");
    });
    check("on buffers", case, &read::<f32>(c, &o, batch * dim), &expected);

    let t = cube_tensor(env, &d, &[vocab, dim], DType::F32);
    let i = cube_tensor(env, &ix, &[batch, seq], DType::I32);
    let (cube, y) =
        time_cube(env, batch * dim, || op.apply_cube(t.clone(), vec![i.clone()]).expect("apply_cube"));
    check("apply_cube on CubeTensors", case, &y, &expected);

    let (t, i) = tensors(env, &table, [vocab, dim], &ids, [batch, seq]);
    let (fused, y) = env.burn(&env.device, || {
        let y: Tensor<3> = op.apply(t.clone(), (i.clone(),)).expect("apply");
        y
    });
    check("apply in the fusion stream", case, &values(y), &expected);
    let (burn, y) = env.burn(&env.device, || {
        let rows = t.clone().select(0, i.clone().reshape([batch * seq])).reshape([batch, seq, dim]);
        rows.slice(s![.., seq - 1, ..]).reshape([-1])
    });
    check("Burn", case, &values(y), &expected);
    InteropOutcome {
        case,
        bytes: 2 * batch * dim * 4 + batch * 4,
        buffers,
        cube,
        fused,
        burn,
        burn_ops: "select(0), reshape, slice, materialized",
    }
}

/// A KV-cache write, in place each call: 2048 new tokens' rows at distinct slots (no padding,
/// so Burn's `select_assign` takes the same ids). Its kernels read the slots on the device, so
/// neither `apply` reads them back. `None` where Burn has no f16 tensors.
fn kv_cache(env: &Env) -> Option<InteropOutcome> {
    let case = "KV-cache write f16[32768,8,128] <- [2048,8,128] at slots, in place";
    let (slots, row, n) = (32768, 8 * 128, 2048);
    if !env.device.supports_dtype(DType::F16) {
        return None;
    }
    // 7919 is odd, so `i * 7919 mod 32768` never repeats for i < 32768.
    let ids: Vec<i32> = (0..n).map(|i| ((i * 7919 + 13) % slots) as i32).collect();
    let cache: Vec<f16> = (0..slots * row).map(|i| f16::from_bits((i % 30000) as u16)).collect();
    let new: Vec<f16> = (0..n * row).map(|i| f16::from_bits((i % 29989 + 1) as u16)).collect();
    let mut expected = cache.clone();
    for (r, &slot) in new.chunks_exact(row).zip(&ids) {
        expected[slot as usize * row..][..row].copy_from_slice(r);
    }
    let bits = |v: &[f16]| v.iter().map(|x| f32::from_bits(u32::from(x.to_bits()))).collect::<Vec<f32>>();
    let expected_bits = bits(&expected);
    let op = stridex::scatter! {
        data: f16[32768, 8, 128], indices: i32[2048], updates: f16[2048, 8, 128], axis: 0,
        out_of_range: skip,
    };

    let c = env.client;
    let bytes = |t| op.buffer_bytes(t).unwrap();
    let d = upload(c, &cache, bytes(Operand::Data));
    let ix = upload(c, &ids, bytes(Operand::Indices));
    let u = upload(c, &new, bytes(Operand::Updates));
    let buffers = env.synced_median(|| {
        op.launch(c, &d, &ix, &u).expect("launch");
    });
    check("on buffers", case, &bits(&read::<f16>(c, &d, slots * row)), &expected_bits);

    // The cache's buffer is the CubeTensor's alone, so each call writes it in place.
    let own = upload(c, &cache, bytes(Operand::Data));
    let mut acc = Some(cube_tensor(env, &own, &[slots, 8, 128], DType::F16));
    drop(own);
    let (i, uc) = (cube_tensor(env, &ix, &[n], DType::I32), cube_tensor(env, &u, &[n, 8, 128], DType::F16));
    let cube = median(env.settings.reps, || {
        let t = acc.take().expect("the cache");
        let y = op.apply_cube(t, i.clone(), uc.clone()).expect("apply_cube");
        sync(&y.client);
        acc = Some(y);
    });
    let y = acc.expect("the cache");
    assert!(y.can_mut(), "{case}: apply_cube did not write in place");
    check("apply_cube on CubeTensors", case, &bits(&read::<f16>(c, &y.handle, slots * row)), &expected_bits);

    let dev = &env.device;
    let fresh = || Tensor::<3>::from_data(TensorData::new(cache.clone(), [slots, 8, 128]), (dev, DType::F16));
    let bi = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [n]), dev);
    let bn = Tensor::<3>::from_data(TensorData::new(new.clone(), [n, 8, 128]), (dev, DType::F16));
    let halves = |t: Tensor<3>| bits(&t.into_data().try_to_vec::<f16>().expect("f16 values"));
    let (fused, written) =
        env.burn_in_place(dev, fresh(), |t| op.apply(t, bi.clone(), bn.clone()).expect("apply"));
    check("apply in the fusion stream", case, &halves(written), &expected_bits);
    let (burn, written) = env.burn_in_place(dev, fresh(), |t| {
        t.select_assign(0, bi.clone(), bn.clone(), IndexingUpdateOp::Assign)
    });
    check("Burn", case, &halves(written), &expected_bits);
    Some(InteropOutcome {
        case,
        bytes: 2 * n * row * 2 + n * 4,
        buffers,
        cube,
        fused,
        burn,
        burn_ops: "select_assign(0, Assign), in place",
    })
}

pub fn print(o: &InteropOutcome, first: bool) {
    if first {
        println!(
            "\n{:<66} {:>8} {:>10} {:>10} {:>10} {:>10} {:>11} {:>10}",
            "in a Burn program (ms)",
            "MB",
            "buffers",
            "Cube apply",
            "Fus. apply",
            "Burn (Fus)",
            "Fus./buffer",
            "Burn/Fus."
        );
    }
    println!(
        "{:<66} {:>8.1} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>11.2} {:>10.1}",
        o.case,
        o.bytes as f64 / 1e6,
        o.buffers * 1e3,
        o.cube * 1e3,
        o.fused * 1e3,
        o.burn * 1e3,
        o.fused / o.buffers,
        o.burn / o.fused
    );
}

pub fn json(o: &InteropOutcome, backend: &str) -> String {
    format!(
        "{{\"interop\": \"{}\", \"backend\": \"{backend}\", \"bytes\": {}, \"buffers_ms\": {:.4}, \"cube_apply_ms\": {:.4}, \"fusion_apply_ms\": {:.4}, \"burn_fusion_ms\": {:.4}}}",
        o.case,
        o.bytes,
        o.buffers * 1e3,
        o.cube * 1e3,
        o.fused * 1e3,
        o.burn * 1e3
    )
}

pub fn markdown(os: &[InteropOutcome]) -> String {
    let mut s = String::from(
        "\n## In a Burn program\n\nThe same op launched on device buffers, applied at once to Burn \
         0.22.1's `CubeTensor`s (`op.apply_cube(..)` on the unfused `CubeBackend`'s primitive: \
         shape and dtype checks, the output's allocation, a `CubeTensor` back), and applied to \
         Burn `Tensor`s (`op.apply(..)`), where it joins Burn's fusion stream as a custom \
         operation; beside Burn's own `Tensor` ops on the same tensors (fusion stream). \
         Milliseconds per synced call; outputs of all four checked against the host. Ops use \
         `clamp` (the KV-cache write `skip`): under `error`, an apply in the stream reads the \
         ids back to check them before it joins. The KV-cache write is in place each call; its \
         kernels read the slots on the device, so no apply reads them back.\n\n| case | MB moved | buffers ms | `apply_cube` ms | \
         `apply` (fusion) ms | Burn (fusion) ms | `apply` / buffers | Burn / `apply` | Burn ops |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for o in os {
        s.push_str(&format!(
            "| {} | {:.1} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} | {:.1}x | {} |\n",
            o.case,
            o.bytes as f64 / 1e6,
            o.buffers * 1e3,
            o.cube * 1e3,
            o.fused * 1e3,
            o.burn * 1e3,
            o.fused / o.buffers,
            o.burn / o.fused,
            o.burn_ops
        ));
    }
    s
}
