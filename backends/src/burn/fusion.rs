//! Ops in Burn's fusion stream (`Fusion<CubeBackend>`): each registered as a custom
//! operation (`OperationIr::Custom`, as burn-vision registers its kernels) that runs, in order
//! with the ops around it, on the `CubeBackend` tensors its inputs became.

use super::{check_strides, Fused};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::ops::{GatherOp, SliceOp};
use burn_cubecl::fusion::{CubeFusionHandle, FusionCubeRuntime};
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{Cube, CubeBackend};
use burn_fusion::stream::{Operation, StreamId};
use burn_fusion::ExecutionError;
use burn_ir::{CustomOpIr, HandleContainer, OperationIr, OperationOutput, TensorIr};
use burn_tensor::{Int, Tensor};
use std::sync::Arc;
use stridex_core::{Operand, TensorLayout};

pub(super) use crate::ops::shared;

/// A tensor in Burn's fusion stream is contiguous: the descriptor must say so.
pub(super) fn check_packed(tensor: Operand, layout: &TensorLayout) -> Result<(), Error> {
    if !layout.is_packed() {
        return Err(Error::BurnTensor {
            tensor,
            mismatch: format!(
                "the op's `{tensor}` declares strides {}, but a tensor in Burn's fusion stream is contiguous; apply the op to the `CubeBackend` tensor (`Fusion` unwrapped) to pass a strided view",
                stridex_core::dims::list(&layout.strides)
            ),
        });
    }
    Ok(())
}

/// An index tensor's bytes, read back (a sync): under the `error` policy the values are checked
/// before the op joins the stream, where an error would surface only when the result is read.
pub(super) fn read_back(indices: &Fused) -> Result<Vec<u8>, Error> {
    // A tensor's data is its values whatever rank the Tensor type says.
    let t = Tensor::<1, Int>::from_primitive::<Cube>(indices.clone());
    let data = t.try_into_data().map_err(|e| Error::Device(format!("reading the indices back: {e:?}")))?;
    Ok(data.as_bytes().to_vec())
}

/// Index tensors whose values are read back at most once each: an `error`-policy check and a
/// backward pass's grouping, planned for the same call, share one read (one sync).
pub(super) struct ReadBack {
    tensors: Vec<Fused>,
    bytes: Vec<std::sync::OnceLock<Vec<u8>>>,
}

impl ReadBack {
    pub(super) fn new(tensors: Vec<Fused>) -> ReadBack {
        let bytes = tensors.iter().map(|_| std::sync::OnceLock::new()).collect();
        ReadBack { tensors, bytes }
    }

    pub(super) fn tensors(&self) -> &[Fused] {
        &self.tensors
    }

    /// Tensor `i`'s bytes, read back on first use.
    pub(super) fn bytes(&self, i: usize) -> Result<&[u8], Error> {
        if let Some(b) = self.bytes[i].get() {
            return Ok(b);
        }
        let read = read_back(&self.tensors[i])?;
        Ok(self.bytes[i].get_or_init(|| read))
    }
}

/// A CubeTensor from the fusion stream laid out as `layout` says (the descriptors applied in
/// the stream are packed): a view, or a tensor Burn allocated with padded rows (on CUDA a
/// `[n, 3]` f32 tensor has strides `[4, 1]`, and Burn's `into_contiguous` keeps that pitch), is
/// copied packed first.
pub(super) fn laid_out(tensor: Operand, t: CubeTensor, layout: &TensorLayout) -> Result<CubeTensor, Error> {
    if check_strides(tensor, t.meta.strides(), layout).is_ok() {
        return Ok(t);
    }
    // Padded rows stay padded through Burn's `into_contiguous`: pack them in one copy.
    if super::row_major_padded(t.meta.shape(), t.meta.strides()) {
        return packed_operand(tensor, t);
    }
    let t = burn_cubecl::kernel::into_contiguous(t);
    if check_strides(tensor, t.meta.strides(), layout).is_ok() {
        return Ok(t);
    }
    packed_operand(tensor, t)
}

/// `t`'s values in a packed row-major buffer of their own, which is what a descriptor without
/// `strides` reads. On CUDA, Burn allocates tensors with each row padded to an aligned pitch (a
/// `[n, 3]` f32 tensor has strides `[4, 1]`), and its `into_contiguous` keeps that pitch; this
/// copies by stridex's slice kernel instead: the whole window of a descriptor that declares
/// `t`'s strides, moving its elements' bits. `t`'s strides must give every element its own
/// offset or repeat some (a broadcast): any layout a slice's input may have.
pub fn packed(t: CubeTensor) -> Result<CubeTensor, Error> {
    packed_operand(Operand::Input, t)
}

/// [`packed`] for an op's operand `tensor`, which its errors name.
pub(super) fn packed_operand(tensor: Operand, t: CubeTensor) -> Result<CubeTensor, Error> {
    // A quantized tensor's buffer holds blocks of values beside their scales: moving its
    // elements one by one would return bits without a meaning, so it is refused. Every other
    // dtype (Bool stores and Flex32 included) is a plain array of equal units.
    if let burn_tensor::DType::QFloat(scheme) = t.dtype {
        return Err(Error::BurnTensor {
            tensor,
            mismatch: format!(
                "the Burn tensor is quantized ({scheme:?}): stridex moves plain elements; dequantize it first"
            ),
        });
    }
    let t = burn_cubecl::kernel::untile(t);
    match t.dtype.size() {
        1 => packed_as::<u8>(tensor, t),
        2 => packed_as::<u16>(tensor, t),
        8 => packed_as::<u64>(tensor, t),
        _ => packed_as::<u32>(tensor, t),
    }
}

fn packed_as<T: Element>(tensor: Operand, t: CubeTensor) -> Result<CubeTensor, Error> {
    use stridex_core::{Dims, SignedDims, SliceDesc, SliceWindow, TensorDecl};
    let (sizes, strides) = (t.meta.shape().to_vec(), t.meta.strides().to_vec());
    let too_many = || Error::BurnTensor {
        tensor,
        mismatch: format!("a rank-{} tensor: stridex takes at most {}", sizes.len(), stridex_core::MAX_RANK),
    };
    let dims = |v: &[usize]| Dims::new(v).ok_or_else(too_many);
    let input = TensorDecl { dtype: T::DTYPE, sizes: dims(&sizes)?, strides: Some(dims(&strides)?) };
    let window = SliceWindow::DirectMl {
        offsets: dims(&vec![0; sizes.len()])?,
        sizes: dims(&sizes)?,
        strides: SignedDims::new(&vec![1; sizes.len()]).ok_or_else(too_many)?,
    };
    let desc = SliceDesc::new(input, window);
    let kept = shared(&desc, || SliceOp::<T>::new(desc));
    let op = (*kept).as_ref().map_err(Clone::clone)?;
    let client = &t.client;
    let input = super::padded(client, &t.handle, op.buffer_bytes(Operand::Input)?)?;
    let out = client.empty(op.buffer_bytes(Operand::Output)?.max(4));
    op.launch(client, &input, &out)?;
    Ok(super::output_tensor(&t, out, &TensorLayout::packed(dims(&sizes)?)))
}

/// An op as the fusion stream runs it. Its checks ran before it was registered; what can fail
/// here is the device, which Burn's own ops also raise from inside the stream.
pub(super) trait OnCube: std::fmt::Debug + Send + Sync + 'static {
    const NAME: &'static str;
    /// The leading inputs of the data's kind (the data; a scatter's updates too); the rest
    /// are `Int` index tensors.
    const DATA_INPUTS: usize = 1;
    /// The op on the stream's tensors: the data (or input) first, then the index tensors.
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error>;
}

impl<T: Element, J: IndexElement> OnCube for Arc<GatherOp<T, J>> {
    const NAME: &'static str = "stridex_gather";
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        let [data, indices]: [CubeTensor; 2] = inputs.try_into().expect("data and indices");
        super::gather_on_cube(self, data, indices, laid_out)
    }
}

/// A gather that reads its signed index tensor as unsigned (the same bits, `U` of the same
/// width): a negative index is then past the end, so under `zero` it reads zero. That is the
/// gradient of a scatter's `skip` updates, which a signed gather would read from the end.
#[derive(Debug)]
pub(super) struct AsUnsigned<T: 'static, U: 'static>(pub Arc<GatherOp<T, U>>);

impl<T: Element, U: IndexElement> OnCube for AsUnsigned<T, U> {
    const NAME: &'static str = "stridex_gather_unsigned";
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        let [data, mut indices]: [CubeTensor; 2] = inputs.try_into().expect("data and indices");
        indices.dtype = match U::INDEX {
            stridex_core::IndexType::U64 => burn_tensor::DType::U64,
            _ => burn_tensor::DType::U32,
        };
        super::gather_on_cube(&self.0, data, indices, laid_out)
    }
}

impl<T: Element> OnCube for Arc<SliceOp<T>> {
    const NAME: &'static str = "stridex_slice";
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        let [input]: [CubeTensor; 1] = inputs.try_into().expect("the input");
        super::slice_on_cube(self, input, laid_out)
    }
}

#[derive(Debug)]
struct FusedOp<O> {
    desc: CustomOpIr,
    op: O,
    /// Whether the data (the first `O::DATA_INPUTS` inputs, and the output) is a float
    /// tensor; the rest are ints.
    float: bool,
}

impl<O: OnCube> Operation<FusionCubeRuntime> for FusedOp<O> {
    fn execute(&self, handles: &mut HandleContainer<CubeFusionHandle>) -> Result<(), ExecutionError> {
        let inputs = (self.desc.inputs.iter().enumerate())
            .map(|(i, t)| {
                if i < O::DATA_INPUTS && self.float {
                    handles.get_float_tensor::<CubeBackend>(t)
                } else {
                    handles.get_int_tensor::<CubeBackend>(t)
                }
            })
            .collect();
        // An error here (the device's) surfaces when the result is read, as Burn's own do.
        let y = self
            .op
            .run(inputs)
            .map_err(|e| ExecutionError::with_context(format!("{} in Burn's fusion stream: {e}", O::NAME)))?;
        let out = &self.desc.outputs[0].id;
        if self.float {
            handles.register_float_tensor::<CubeBackend>(out, y);
        } else {
            handles.register_int_tensor::<CubeBackend>(out, y);
        }
        Ok(())
    }
}

/// Registers `op` in the stream on `inputs` (the data first, then index tensors); its output
/// has `shape` and the data's dtype.
pub(super) fn register<O: OnCube>(op: O, float: bool, inputs: Vec<Fused>, shape: &[usize]) -> Fused {
    let client = inputs[0].client.clone();
    let out = TensorIr::uninit(
        client.create_empty_handle(),
        burn_tensor::Shape::from(shape.to_vec()),
        inputs[0].dtype,
    );
    let irs: Vec<TensorIr> = inputs.into_iter().map(|t| t.into_ir()).collect();
    let desc = CustomOpIr::new(O::NAME, &irs, &[out]);
    let fused = FusedOp { desc: desc.clone(), op, float };
    client.register(StreamId::current(), OperationIr::Custom(desc), fused).output()
}
