//! The runtime front door: descriptors whose shapes are known only at run time. The same rule
//! functions as the macros check them, and they launch the same kernels; every mistake is an
//! `Err`, never a panic.
//!
//! ```no_run
//! # fn main() -> Result<(), stridex_backends::Error> {
//! use stridex_backends::Gather;
//! let op = Gather::onnx().data::<f32>(&[3, 2]).indices::<i64>(&[2, 2]).axis(0).build()?;
//! let y = op.run(&[1.0, 1.2, 2.3, 3.4, 4.5, 5.7], &[0, 1, 1, 2])?;
//! # Ok(()) }
//! ```

use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::ops::{ChainOp, GatherOp, IndexTypes, ScatterOp, SliceOp};
use std::marker::PhantomData;
use stridex_core::dynamic::StageWindowKeys;
use stridex_core::{
    tensor, ChainCount, ChainDesc, Dims, Duplicates, FeatureLevel, GatherDesc, GatherForm, GatherRules,
    GatherStage, Operand, OutOfRange, OutputDecl, Reduction, RuleError, ScatterDesc, SignedDims, SliceDesc,
    SliceForm, SliceRange, SliceWindow, StageDesc, TensorDecl, Window, MAX_RANK,
};

/// Sizes and optional strides, as given.
#[derive(Clone, Debug, Default)]
struct Shape {
    sizes: Vec<usize>,
    strides: Option<Vec<usize>>,
}

impl Shape {
    fn new(sizes: &[usize], strides: Option<&[usize]>) -> Shape {
        Shape { sizes: sizes.to_vec(), strides: strides.map(<[usize]>::to_vec) }
    }

    fn dims(&self, which: Operand) -> Result<(Dims, Option<Dims>), RuleError> {
        let strides =
            self.strides.as_deref().map(|s| tensor::strides(which, self.sizes.len(), s)).transpose()?;
        Ok((tensor::dims(which, &self.sizes)?, strides))
    }

    fn decl(&self, which: Operand, dtype: stridex_core::DType) -> Result<TensorDecl, RuleError> {
        let (sizes, strides) = self.dims(which)?;
        Ok(TensorDecl { dtype, sizes, strides })
    }
}

/// A gather described at run time: `Gather::onnx().data::<f32>(&[3, 2]).indices::<i64>(&[2, 2])`.
#[derive(Clone, Debug)]
pub struct Gather<T = (), I = ()> {
    k: GatherKeys,
    types: PhantomData<fn() -> (T, I)>,
}

/// What the builder has been told, apart from its types.
#[derive(Clone, Debug)]
struct GatherKeys {
    form: GatherForm,
    rules: GatherRules,
    data: Shape,
    indices: Shape,
    /// `None` until [`Gather::axis`] (0 for the axis form; GatherND takes none).
    axis: Option<i64>,
    batch_dims: Option<i64>,
    index_dims: Option<usize>,
    out_of_range: Option<OutOfRange>,
    output: Option<Shape>,
    feature_level: Option<FeatureLevel>,
    dynamic_leading: bool,
}
impl Gather {
    pub fn new(rules: GatherRules) -> Gather {
        let k = GatherKeys {
            form: GatherForm::Axis,
            rules,
            data: Shape::default(),
            indices: Shape::default(),
            axis: None,
            batch_dims: None,
            index_dims: None,
            out_of_range: None,
            output: None,
            feature_level: None,
            dynamic_leading: false,
        };
        Gather { k, types: PhantomData }
    }

    pub fn onnx() -> Gather {
        Gather::new(GatherRules::Onnx)
    }

    pub fn openvino() -> Gather {
        Gather::new(GatherRules::OpenVino)
    }

    pub fn directml() -> Gather {
        Gather::new(GatherRules::DirectMl)
    }
}

impl<T, I> Gather<T, I> {
    fn retype<U, J>(self) -> Gather<U, J> {
        Gather { k: self.k, types: PhantomData }
    }

    /// Packed row-major data of element type `U`.
    pub fn data<U: Element>(self, sizes: &[usize]) -> Gather<U, I> {
        self.data_strided(sizes, None)
    }

    /// Data with explicit element strides (`None`: packed).
    pub fn data_strided<U: Element>(mut self, sizes: &[usize], strides: Option<&[usize]>) -> Gather<U, I> {
        self.k.data = Shape::new(sizes, strides);
        self.retype()
    }

    pub fn indices<J: IndexElement>(self, sizes: &[usize]) -> Gather<T, J> {
        self.indices_strided(sizes, None)
    }

    pub fn indices_strided<J: IndexElement>(
        mut self,
        sizes: &[usize],
        strides: Option<&[usize]>,
    ) -> Gather<T, J> {
        self.k.indices = Shape::new(sizes, strides);
        self.retype()
    }

    pub fn axis(mut self, axis: i64) -> Self {
        self.k.axis = Some(axis);
        self
    }

    /// The GatherElements form (what `gather_elements!` builds): one element per index, the
    /// indices of the data's rank and shaped as the output.
    pub fn elements(mut self) -> Self {
        self.k.form = GatherForm::Elements;
        self
    }

    /// The GatherND form (what `gather_nd!` builds): the indices' last dimension holds tuples
    /// of coordinates into the data's dimensions after `batch_dims`. It takes no axis: an
    /// [`Gather::axis`] call is an `Err` from [`Gather::desc`].
    pub fn nd(mut self) -> Self {
        self.k.form = GatherForm::Nd;
        self
    }

    pub fn batch_dims(mut self, batch_dims: i64) -> Self {
        self.k.batch_dims = Some(batch_dims);
        self
    }

    pub fn index_dims(mut self, index_dims: usize) -> Self {
        self.k.index_dims = Some(index_dims);
        self
    }

    pub fn out_of_range(mut self, policy: OutOfRange) -> Self {
        self.k.out_of_range = Some(policy);
        self
    }

    /// DirectML only: the feature level of the devices targeted (default: the highest, 4_1).
    pub fn feature_level(mut self, level: FeatureLevel) -> Self {
        self.k.feature_level = Some(level);
        self
    }

    /// The indices' leading size is known only at run time (`indices: i64[_, 8]` in
    /// `gather!`): `run` reads it from the indices' length, and one kernel serves every count.
    /// The leading size given to [`Gather::indices`] is not read (write 0). As a chain's stage,
    /// it is the chain's count; on a gather_elements stage after the chain's count, that same
    /// count (its picks per row of the count).
    pub fn dynamic_leading(mut self) -> Self {
        self.k.dynamic_leading = true;
        self
    }

    /// Declares the output shape (it must equal the inferred one) and optional strides. With
    /// [`Gather::dynamic_leading`], its leading size is the count and is not read (write 0);
    /// strided, its leading stride must span the other dimensions.
    pub fn output(mut self, sizes: &[usize], strides: Option<&[usize]>) -> Self {
        self.k.output = Some(Shape::new(sizes, strides));
        self
    }
}

impl<T, I> Gather<T, I> {
    /// The axis as a descriptor holds it: GatherND's tuples name the axes, so it takes none.
    fn axis_key(&self) -> Result<i64, Error> {
        match (self.k.form, self.k.axis) {
            (GatherForm::Nd, Some(_)) => Err(RuleError::NdKey { rules: self.k.rules, key: "axis" }.into()),
            (_, axis) => Ok(axis.unwrap_or(0)),
        }
    }
}

impl<T: Element, I: IndexElement> Gather<T, I> {
    /// The plain descriptor, as the macro would write it (no rule checked yet).
    pub fn desc(&self) -> Result<GatherDesc, Error> {
        let output = output_decl(&self.k.output)?;
        Ok(GatherDesc {
            form: self.k.form,
            rules: self.k.rules,
            data: self.k.data.decl(Operand::Data, T::DTYPE)?,
            indices: self.k.indices.decl(Operand::Indices, I::INDEX.dtype())?,
            axis: self.axis_key()?,
            batch_dims: self.k.batch_dims,
            index_dims: self.k.index_dims,
            out_of_range: self.k.out_of_range,
            output,
            feature_level: self.k.feature_level,
            dynamic_leading: self.k.dynamic_leading,
        })
    }

    /// Checks every rule and prepares the kernel.
    pub fn build(&self) -> Result<GatherOp<T, I>, Error> {
        GatherOp::new(self.desc()?)
    }
}

/// A slice described at run time: a DirectML SLICE1 window or ONNX Slice-13 starts/ends.
#[derive(Clone, Debug)]
pub struct Slice<T = ()> {
    k: SliceKeys,
    types: PhantomData<fn() -> T>,
}

/// What the builder has been told, apart from its types.
#[derive(Clone, Debug)]
struct SliceKeys {
    form: SliceForm,
    /// The window keys given, in order: a key of the other form is an error (core's rule, as in
    /// the macro), not silently ignored.
    given: Vec<Window>,
    input: Shape,
    /// SLICE1: offsets and sizes.
    offsets: Vec<usize>,
    sizes: Vec<usize>,
    /// SLICE1's window strides.
    strides: Vec<i64>,
    /// ONNX.
    starts: Vec<i64>,
    ends: Vec<i64>,
    axes: Option<Vec<i64>>,
    steps: Option<Vec<i64>>,
    output: Option<Shape>,
    feature_level: Option<FeatureLevel>,
    /// `s![..]`-style ranges standing for the SLICE1 window.
    ranges: Option<Vec<SliceRange>>,
    dynamic_leading: bool,
}
impl Slice {
    fn new(form: SliceForm) -> Slice {
        let k = SliceKeys {
            form,
            given: Vec::new(),
            input: Shape::default(),
            offsets: Vec::new(),
            sizes: Vec::new(),
            strides: Vec::new(),
            starts: Vec::new(),
            ends: Vec::new(),
            axes: None,
            steps: None,
            output: None,
            feature_level: None,
            ranges: None,
            dynamic_leading: false,
        };
        Slice { k, types: PhantomData }
    }

    /// DirectML SLICE1: [`Slice::window`] gives offsets, sizes and signed strides.
    pub fn directml() -> Slice {
        Slice::new(SliceForm::DirectMl)
    }

    /// ONNX Slice-13: [`Slice::starts_ends`], then optional [`Slice::axes`] and [`Slice::steps`].
    pub fn onnx() -> Slice {
        Slice::new(SliceForm::Onnx)
    }
}

impl<T> Slice<T> {
    pub fn input<U: Element>(self, sizes: &[usize]) -> Slice<U> {
        self.input_strided(sizes, None)
    }

    pub fn input_strided<U: Element>(self, sizes: &[usize], strides: Option<&[usize]>) -> Slice<U> {
        Slice { k: SliceKeys { input: Shape::new(sizes, strides), ..self.k }, types: PhantomData }
    }

    /// The window as ndarray/Burn-style ranges, one per leading dimension (the rest whole):
    /// `&[SliceRange::FULL, SliceRange::new(1, 9).step(2), SliceRange::FULL.step(-1)]` is
    /// `s[.., 1..9;2, ..;-1]` (a negative step walks the range backwards, as ndarray does).
    pub fn ranges(mut self, ranges: &[SliceRange]) -> Self {
        self.k.ranges = Some(ranges.to_vec());
        self
    }

    /// SLICE1's window: per dimension an offset, a size and a signed, non-zero stride.
    pub fn window(mut self, offsets: &[usize], sizes: &[usize], strides: &[i64]) -> Self {
        (self.k.offsets, self.k.sizes, self.k.strides) = (offsets.to_vec(), sizes.to_vec(), strides.to_vec());
        self.k.given.extend([Window::Offsets, Window::Sizes, Window::Strides]);
        self
    }

    /// ONNX's `starts` and `ends`.
    pub fn starts_ends(mut self, starts: &[i64], ends: &[i64]) -> Self {
        (self.k.starts, self.k.ends) = (starts.to_vec(), ends.to_vec());
        self.k.given.extend([Window::Starts, Window::Ends]);
        self
    }

    pub fn axes(mut self, axes: &[i64]) -> Self {
        self.k.axes = Some(axes.to_vec());
        self.k.given.push(Window::Axes);
        self
    }

    pub fn steps(mut self, steps: &[i64]) -> Self {
        self.k.steps = Some(steps.to_vec());
        self.k.given.push(Window::Steps);
        self
    }

    /// Declares the output shape and optional strides. With [`Slice::dynamic_leading`], its
    /// leading size is the count and is not read (write 0); strided, its leading stride must
    /// span the other dimensions.
    pub fn output(mut self, sizes: &[usize], strides: Option<&[usize]>) -> Self {
        self.k.output = Some(Shape::new(sizes, strides));
        self
    }

    /// SLICE1 windows only: the DirectML feature level targeted (default: the highest, 4_1).
    pub fn feature_level(mut self, level: FeatureLevel) -> Self {
        self.k.feature_level = Some(level);
        self
    }

    /// The input's leading size is known only at run time (`input: f32[_, 3, 64, 64]` in
    /// `slice!`): `run` reads it from the input's length, and one kernel serves every count.
    /// The window must take that dimension whole (offset 0, stride 1; its window size, like
    /// the input's leading size, is not read).
    pub fn dynamic_leading(mut self) -> Self {
        self.k.dynamic_leading = true;
        self
    }
}

impl<T> Slice<T> {
    /// The window as given, its lengths checked against `rank` dimensions; ranges lowered
    /// against `sizes` (the input's, or a stage's received shape).
    fn slice_window(
        &self,
        rank: usize,
        against: &'static str,
        sizes: &[usize],
    ) -> Result<SliceWindow, Error> {
        for w in &self.k.given {
            self.k.form.check_key(w.key())?;
        }
        if let Some(ranges) = &self.k.ranges {
            let given: Vec<&str> = self.k.given.iter().map(|w| w.key()).collect();
            stridex_core::keys::check_ranges(self.k.form, &given)?;
            let mut sizes = sizes.to_vec();
            if self.k.dynamic_leading {
                if let Some(first) = ranges.first() {
                    stridex_core::dynamic::check_leading_range(first)?;
                }
                // Lowered against the placeholder count, as the macro does.
                if let Some(n) = sizes.first_mut() {
                    *n = stridex_core::dynamic::PLACEHOLDER;
                }
            }
            let (offsets, sizes, strides) = stridex_core::ranges::window(&sizes, ranges)?;
            return Ok(SliceWindow::DirectMl { offsets, sizes, strides });
        }
        let too_long = |window, len| RuleError::WindowLen { window, len, expected: rank, against };
        let signed = |v: &[i64], w| SignedDims::new(v).ok_or(too_long(w, v.len()));
        let unsigned = |v: &[usize], w| Dims::new(v).ok_or(too_long(w, v.len()));
        Ok(if self.k.form == SliceForm::Onnx {
            SliceWindow::Onnx {
                starts: signed(&self.k.starts, Window::Starts)?,
                ends: signed(&self.k.ends, Window::Ends)?,
                axes: self.k.axes.as_deref().map(|a| signed(a, Window::Axes)).transpose()?,
                steps: self.k.steps.as_deref().map(|s| signed(s, Window::Steps)).transpose()?,
            }
        } else {
            SliceWindow::DirectMl {
                offsets: unsigned(&self.k.offsets, Window::Offsets)?,
                sizes: unsigned(&self.k.sizes, Window::Sizes)?,
                strides: signed(&self.k.strides, Window::Strides)?,
            }
        })
    }
}

fn output_decl(output: &Option<Shape>) -> Result<Option<OutputDecl>, Error> {
    Ok(match output {
        Some(o) => {
            let (sizes, strides) = o.dims(Operand::Output)?;
            Some(OutputDecl { dtype: None, sizes, strides })
        }
        None => None,
    })
}

impl<T: Element> Slice<T> {
    pub fn desc(&self) -> Result<SliceDesc, Error> {
        let input = self.k.input.decl(Operand::Input, T::DTYPE)?;
        let window = self.slice_window(self.k.input.sizes.len(), "the input's rank", &self.k.input.sizes)?;
        Ok(SliceDesc {
            input,
            window,
            output: output_decl(&self.k.output)?,
            feature_level: self.k.feature_level,
            dynamic_leading: self.k.dynamic_leading,
        })
    }

    pub fn build(&self) -> Result<SliceOp<T>, Error> {
        SliceOp::new(self.desc()?)
    }
}

/// A chain described at run time: the data, then stages in order, each a [`Gather`] or a
/// [`Slice`] builder without its data, input or output (the previous stage's output is its
/// input), then optionally the chain's output layout.
///
/// ```no_run
/// # fn main() -> Result<(), stridex_backends::Error> {
/// use stridex_backends::{Chain, Gather, Slice};
/// let op = Chain::data::<f32>(&[100, 16])
///     .gather(Gather::onnx().indices::<i64>(&[2, 5]).axis(0))
///     .slice(Slice::onnx().starts_ends(&[-1], &[5]).axes(&[1]))
///     .build()?;
/// let y = op.run(&vec![0.0; 1600], (&[1i64, 2, 3, 4, 5, 6, 7, 8, 9, 10],))?;
/// assert_eq!(y.shape(), [2, 1, 16]);
/// # Ok(()) }
/// ```
///
/// A chain may end in [`Chain::convert`]: the result in f32, f16 or bf16, `x * scale + offset`
/// per channel, computed in the same kernel.
#[derive(Clone, Debug)]
pub struct Chain<T = (), I = (), O = T> {
    k: ChainKeys,
    types: Types<T, I, O>,
}

/// The builder's element and index types, carried in its type only.
type Types<T, I, O> = PhantomData<fn() -> (T, I, O)>;

/// What the builder has been told, apart from its types.
#[derive(Clone, Debug)]
struct ChainKeys {
    data: Shape,
    stages: Vec<StageDesc>,
    /// The first mistake in a stage, reported by `build`.
    mistake: Option<Error>,
    output: Option<Shape>,
    dynamic_leading: Option<ChainCount>,
}
/// Index types with one more gather's appended (a chain has at most four gathers).
pub trait AppendIndex<J>: IndexTypes {
    type Out: IndexTypes;
}

impl<J: IndexElement> AppendIndex<J> for () {
    type Out = (J,);
}
impl<A: IndexElement, J: IndexElement> AppendIndex<J> for (A,) {
    type Out = (A, J);
}
impl<A: IndexElement, B: IndexElement, J: IndexElement> AppendIndex<J> for (A, B) {
    type Out = (A, B, J);
}
impl<A: IndexElement, B: IndexElement, C: IndexElement, J: IndexElement> AppendIndex<J> for (A, B, C) {
    type Out = (A, B, C, J);
}

impl Chain {
    /// Packed row-major data of element type `T`.
    pub fn data<T: Element>(sizes: &[usize]) -> Chain<T> {
        Chain::data_strided(sizes, None)
    }

    /// Data with explicit element strides (`None`: packed).
    pub fn data_strided<T: Element>(sizes: &[usize], strides: Option<&[usize]>) -> Chain<T> {
        let k = ChainKeys {
            data: Shape::new(sizes, strides),
            stages: Vec::new(),
            mistake: None,
            output: None,
            dynamic_leading: None,
        };
        Chain { k, types: PhantomData }
    }
}

impl<T: Element, I: IndexTypes, O: Element> Chain<T, I, O> {
    fn then<U, P>(mut self, stage: Result<StageDesc, Error>) -> Chain<T, U, P> {
        match stage {
            Ok(s) => self.k.stages.push(s),
            Err(e) => {
                let stage = self.k.stages.len() + 1;
                self.k.mistake.get_or_insert(Error::InStage { stage, error: Box::new(e) });
            }
        }
        Chain { k: self.k, types: PhantomData }
    }

    /// The data's leading size is known only at run time (`data: f32[_, ..]` in `chain!`): the
    /// chain's count, which every stage keeps as its leading size; `run` reads it from the
    /// data's length. Call it right after [`Chain::data`], whose leading size is not read
    /// (write 0).
    pub fn dynamic_leading(mut self) -> Self {
        let dynamic = |fault| Some(RuleError::Dynamic { fault, at: stridex_core::Location::Chain }.into());
        // A stage added (or refused: its mistake is kept instead) before this call.
        let late = !self.k.stages.is_empty() || matches!(self.k.mistake, Some(Error::InStage { .. }));
        if late {
            // The stages were checked against a fixed leading size: whatever they reported
            // comes from calling this too late.
            self.k.mistake = dynamic(stridex_core::DynamicFault::CountAfterStages);
        } else if self.k.dynamic_leading.is_some() && self.k.mistake.is_none() {
            self.k.mistake = dynamic(stridex_core::DynamicFault::SecondCount);
        }
        self.k.dynamic_leading = Some(ChainCount::Data);
        self
    }

    /// Appends a gather; its data is the previous stage's output.
    pub fn gather<J: IndexElement>(mut self, gather: Gather<(), J>) -> Chain<T, I::Out, O>
    where
        I: AppendIndex<J>,
    {
        let stage = (|| {
            if gather.k.output.is_some() {
                return Err(RuleError::StageKey { key: "output" }.into());
            }
            Ok(StageDesc::Gather(GatherStage {
                form: gather.k.form,
                rules: gather.k.rules,
                indices: gather.k.indices.decl(Operand::Indices, J::INDEX.dtype())?,
                axis: gather.axis_key()?,
                batch_dims: gather.k.batch_dims,
                index_dims: gather.k.index_dims,
                out_of_range: gather.k.out_of_range,
            }))
        })();
        // A `_` on the indices' leading size is the chain's count (one per chain), or, on a
        // gather_elements after it, that same count (core's rule, as the macro applies it).
        let counted = self.k.dynamic_leading.is_some();
        let stage = match stage {
            Ok(_) => match stridex_core::dynamic::stage_indices_fault(
                gather.k.form,
                counted,
                gather.k.dynamic_leading,
            ) {
                Some(e) => Err(e.into()),
                None => stage,
            },
            e => e,
        };
        if gather.k.dynamic_leading && stage.is_ok() && !counted {
            self.k.dynamic_leading = Some(ChainCount::Indices { stage: self.k.stages.len() + 1 });
        }
        self.then(stage)
    }

    /// Appends a slice; its input is the previous stage's output.
    pub fn slice(self, slice: Slice) -> Chain<T, I, O> {
        let stage = (|| {
            if slice.k.output.is_some() {
                return Err(RuleError::StageKey { key: "output" }.into());
            }
            if slice.k.dynamic_leading {
                return Err(RuleError::StageKey { key: "_" }.into());
            }
            // The chain-stage rules both front ends share: the shape ranges are lowered against
            // (its count at the placeholder), and the window forms a count refuses.
            let keys = match &slice.k.ranges {
                Some(r) => StageWindowKeys::Ranges { first: r.first().copied() },
                None => StageWindowKeys::Keys(slice.k.form),
            };
            let received = match stridex_core::dynamic::slice_stage_shape(
                &self.prefix()?,
                self.k.stages.len() + 1,
                keys,
            ) {
                // `then` names the stage; the fault is what it carries.
                Err(RuleError::Stage { error, .. }) => return Err((*error).into()),
                other => other?.unwrap_or_default(),
            };
            let window = slice.slice_window(MAX_RANK, "the most dimensions a tensor has", &received)?;
            Ok(StageDesc::Slice(window))
        })();
        self.then(stage)
    }

    /// Ends the chain with a scatter of what it has made (the updates) into the destination
    /// `scatter`'s data names (`into` in `chain!`): `scatter` is a [`Scatter`] without
    /// `updates`; its index type comes last in the chain's. The op then writes the destination
    /// in place (`run_into`, `launch`). In a chain with a `_` count its positions are the
    /// count's: call [`Scatter::dynamic_leading`] (`indices: i32[_]` in `chain!`); the indices'
    /// leading size is then not read (write 0).
    pub fn scatter<J: IndexElement>(self, scatter: Scatter<T, J>) -> Chain<T, I::Out, O>
    where
        I: AppendIndex<J>,
    {
        let counted = self.k.dynamic_leading.is_some();
        let stage = (|| {
            if !scatter.updates.sizes.is_empty() || scatter.updates.strides.is_some() {
                return Err(RuleError::StageKey { key: "updates" }.into());
            }
            if scatter.map.k.dynamic_leading != counted {
                let fault = stridex_core::DynamicFault::ScatterStageCount { counted };
                return Err(RuleError::Dynamic { fault, at: stridex_core::Location::Chain }.into());
            }
            let map = scatter.map.desc()?;
            Ok(StageDesc::Scatter(stridex_core::ScatterStage {
                form: map.form,
                rules: map.rules,
                into: map.data,
                indices: map.indices,
                axis: map.axis,
                reduction: scatter.reduction,
                duplicates: scatter.duplicates,
                use_init_val: scatter.use_init_val,
                out_of_range: map.out_of_range,
            }))
        })();
        self.then(stage)
    }

    /// Ends the chain with a conversion to `U` (f32, f16 or bf16): each element becomes
    /// `x * scale[c] + offset[c]` computed in f32, `c` its coordinate along `dim` (negative
    /// counts from the end) of the shape the stage receives. `scale` and `offset` hold one value
    /// per channel, or one for every channel. The chain! form is
    /// `convert { to: f32, dim: 1, scale: [..], offset: [..] }`.
    pub fn convert<U: Element>(self, dim: i64, scale: &[f32], offset: &[f32]) -> Chain<T, I, U> {
        let stage = StageDesc::Convert(stridex_core::ConvertStage {
            to: U::DTYPE,
            dim,
            scale: stridex_core::Channels::of(scale),
            offset: stridex_core::Channels::of(offset),
        });
        self.then(Ok(stage))
    }

    /// Declares the chain's output shape (it must equal the inferred one) and optional strides.
    /// With [`Chain::dynamic_leading`], its leading size is the count and is not read (write
    /// 0); strided, its leading stride must span the other dimensions.
    pub fn output(mut self, sizes: &[usize], strides: Option<&[usize]>) -> Self {
        self.k.output = Some(Shape::new(sizes, strides));
        self
    }

    /// The chain so far, without an output: the next stage receives its plan's output.
    fn prefix(&self) -> Result<ChainDesc, Error> {
        if let Some(e) = &self.k.mistake {
            return Err(e.clone());
        }
        Ok(ChainDesc {
            data: self.k.data.decl(Operand::Data, T::DTYPE)?,
            stages: self.k.stages.clone().into(),
            output: None,
            dynamic_leading: self.k.dynamic_leading,
        })
    }

    /// The plain descriptor, as `chain!` would write it (no rule checked yet).
    pub fn desc(&self) -> Result<ChainDesc, Error> {
        if let Some(e) = &self.k.mistake {
            return Err(e.clone());
        }
        Ok(ChainDesc {
            data: self.k.data.decl(Operand::Data, T::DTYPE)?,
            stages: self.k.stages.clone().into(),
            output: output_decl(&self.k.output)?,
            dynamic_leading: self.k.dynamic_leading,
        })
    }

    /// Checks every stage's rules and prepares the kernel.
    pub fn build(&self) -> Result<ChainOp<T, I, O>, Error> {
        ChainOp::new(self.desc()?)
    }
}

/// A scatter described at run time, the inverse of the [`Gather`] of the same form, data and
/// indices: `Scatter::onnx().elements().data::<f32>(..).indices::<i64>(..).updates(..)`.
///
/// ```no_run
/// # fn main() -> Result<(), stridex_backends::Error> {
/// use stridex_backends::{core::Reduction, Scatter};
/// let op = Scatter::onnx()
///     .elements()
///     .data::<f32>(&[1, 5])
///     .indices::<i64>(&[1, 2])
///     .updates(&[1, 2])
///     .axis(1)
///     .reduction(Reduction::Add)
///     .build()?;
/// let y = op.run(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1, 1], &[1.1, 2.1])?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Scatter<T = (), I = ()> {
    map: Gather<T, I>,
    updates: Shape,
    reduction: Option<Reduction>,
    duplicates: Option<Duplicates>,
    use_init_val: Option<bool>,
}

impl Scatter {
    /// The axis form exists in OpenVINO alone (ScatterUpdate-3); ONNX and DirectML take
    /// [`Scatter::elements`] and [`Scatter::nd`].
    pub fn new(rules: GatherRules) -> Scatter {
        Scatter {
            map: Gather::new(rules),
            updates: Shape::default(),
            reduction: None,
            duplicates: None,
            use_init_val: None,
        }
    }

    pub fn onnx() -> Scatter {
        Scatter::new(GatherRules::Onnx)
    }

    pub fn openvino() -> Scatter {
        Scatter::new(GatherRules::OpenVino)
    }

    pub fn directml() -> Scatter {
        Scatter::new(GatherRules::DirectMl)
    }
}

impl<T, I> Scatter<T, I> {
    /// Changes the map (and so the types) and keeps the scatter's own keys.
    fn with_map<U, J>(self, f: impl FnOnce(Gather<T, I>) -> Gather<U, J>) -> Scatter<U, J> {
        let Scatter { map, updates, reduction, duplicates, use_init_val } = self;
        Scatter { map: f(map), updates, reduction, duplicates, use_init_val }
    }

    /// Packed row-major data of element type `U` (the updates' type too).
    pub fn data<U: Element>(self, sizes: &[usize]) -> Scatter<U, I> {
        self.data_strided(sizes, None)
    }

    /// Data with explicit element strides (`None`: packed); `launch` writes it in place.
    pub fn data_strided<U: Element>(self, sizes: &[usize], strides: Option<&[usize]>) -> Scatter<U, I> {
        self.with_map(|m| m.data_strided(sizes, strides))
    }

    pub fn indices<J: IndexElement>(self, sizes: &[usize]) -> Scatter<T, J> {
        self.indices_strided(sizes, None)
    }

    pub fn indices_strided<J: IndexElement>(
        self,
        sizes: &[usize],
        strides: Option<&[usize]>,
    ) -> Scatter<T, J> {
        self.with_map(|m| m.indices_strided(sizes, strides))
    }

    /// Packed updates, shaped as the matching gather's output.
    pub fn updates(self, sizes: &[usize]) -> Self {
        self.updates_strided(sizes, None)
    }

    pub fn updates_strided(mut self, sizes: &[usize], strides: Option<&[usize]>) -> Self {
        self.updates = Shape::new(sizes, strides);
        self
    }

    pub fn axis(mut self, axis: i64) -> Self {
        self.map = self.map.axis(axis);
        self
    }

    /// The ScatterElements form (what `scatter_elements!` builds).
    pub fn elements(mut self) -> Self {
        self.map = self.map.elements();
        self
    }

    /// The ScatterND form (what `scatter_nd!` builds); it takes no axis.
    pub fn nd(mut self) -> Self {
        self.map = self.map.nd();
        self
    }

    /// The count of index positions is known only at run time (`indices: i32[_]`, `updates:
    /// f16[_, 8, 128]` in `scatter!`): the leading size of the indices and of the updates,
    /// which `run` reads from the indices' length and `launch_at` is given. The leading sizes
    /// given to [`Scatter::indices`] and [`Scatter::updates`] are not read (write 0).
    pub fn dynamic_leading(mut self) -> Self {
        self.map = self.map.dynamic_leading();
        self
    }

    /// `error`, `zero` (the update is dropped), `clamp` or `skip` (a negative or past-the-end
    /// index drops its update: KV-cache padding).
    pub fn out_of_range(mut self, policy: OutOfRange) -> Self {
        self.map = self.map.out_of_range(policy);
        self
    }

    pub fn reduction(mut self, reduction: Reduction) -> Self {
        self.reduction = Some(reduction);
        self
    }

    /// [`Duplicates::Error`]: a destination written twice is an `Err` naming both positions.
    pub fn duplicates(mut self, duplicates: Duplicates) -> Self {
        self.duplicates = Some(duplicates);
        self
    }

    /// `false`: an element that updates reach becomes the reduction of its updates alone,
    /// without the data's value (OpenVINO ScatterElementsUpdate-12's `use_init_val`; the rules
    /// refuse it elsewhere).
    pub fn use_init_val(mut self, use_init_val: bool) -> Self {
        self.use_init_val = Some(use_init_val);
        self
    }
}

impl<T: Element, I: IndexElement> Scatter<T, I> {
    /// The plain descriptor, as the macro would write it (no rule checked yet).
    pub fn desc(&self) -> Result<ScatterDesc, Error> {
        Ok(ScatterDesc {
            map: self.map.desc()?,
            updates: self.updates.decl(Operand::Updates, T::DTYPE)?,
            reduction: self.reduction,
            duplicates: self.duplicates,
            use_init_val: self.use_init_val,
        })
    }

    /// Checks every rule and prepares the kernel.
    pub fn build(&self) -> Result<ScatterOp<T, I>, Error> {
        ScatterOp::new(self.desc()?)
    }
}
