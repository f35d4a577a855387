//! Scatter (docs/rules.md, "Scatter"): the inverse of each gather form. Where the gather of the
//! same data and indices would read an element into its output, the scatter writes the update
//! at that output position into the element. So a scatter's rules are its gather's (the
//! indices), plus its own: updates shaped as that gather's output, a reduction, a policy for
//! repeated destinations.
//!
//! Its plan splits the updates' dimensions in two: the *keyed* ones walk the indices (each
//! position there names a destination), the *free* ones walk the data and the updates
//! together. An index position and its destination therefore carry a whole run of elements
//! (an embedding row, a KV-cache slot): [`ScatterPlan::group`] lists, per destination run, the
//! positions that write it, in the indices' row-major order, and one kernel invocation per
//! tile of a run (up to four 16-byte units) applies its list in that order. That order is the serial reference's, so
//! every run and every thread count gives the same bits, with no atomics.

use crate::dims::size_product;
use crate::dtype::DType;
use crate::error::{Operand, RuleError};
use crate::gather::{GatherDesc, GatherPlan};
use crate::layout::{next_coords, TensorLayout};
use crate::rules::{Duplicates, GatherForm, GatherRules, OutOfRange, Reduction};
use crate::tensor::{check_addressable, layout, TensorDecl};

/// A scatter as a descriptor states it, before any rule is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScatterDesc {
    /// The gather that reads where this scatter writes: its form, rules, data, indices, axis
    /// and out-of-range policy (`None`: the rule set's default). `batch_dims`, `index_dims`,
    /// `feature_level` and `output` are the gathers' alone: they must be unset.
    pub map: GatherDesc,
    /// Shaped as the gather's output; the data's element type.
    pub updates: TensorDecl,
    /// `None`: `none`.
    pub reduction: Option<Reduction>,
    /// `None`: `last`.
    pub duplicates: Option<Duplicates>,
    /// Whether a reduction starts from the data's element (`None`: it does). `false`: an element
    /// that updates reach becomes the reduction of its updates alone (OpenVINO
    /// ScatterElementsUpdate-12's `use_init_val`; no effect under `none`).
    pub use_init_val: Option<bool>,
}

impl ScatterDesc {
    /// A scatter with its required keys and every optional one unset.
    pub const fn new(
        form: GatherForm,
        rules: GatherRules,
        data: TensorDecl,
        indices: TensorDecl,
        updates: TensorDecl,
        axis: i64,
    ) -> ScatterDesc {
        let mut map = GatherDesc::new(rules, data, indices, axis);
        map.form = form;
        ScatterDesc { map, updates, reduction: None, duplicates: None, use_init_val: None }
    }
}

/// A dimension of the updates that the indices walk: each coordinate is an index position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyedDim {
    pub size: usize,
    /// The indices dimension it is.
    pub indices_dim: usize,
    pub updates_dim: usize,
    /// The data dimension it also walks (ScatterElements' dimensions other than the axis).
    pub data_dim: Option<usize>,
}

/// A dimension of the updates that no index names: the data and the updates walk it together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FreeDim {
    pub size: usize,
    pub updates_dim: usize,
    pub data_dim: usize,
}

/// A scatter that satisfies every rule, normalized.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScatterPlan {
    /// The standard's operator ("ONNX ScatterND-18").
    pub op: &'static str,
    /// The plan of the gather that reads where the scatter writes (its output: the updates'
    /// sizes, packed).
    pub map: GatherPlan,
    pub updates: TensorLayout,
    pub reduction: Reduction,
    pub duplicates: Duplicates,
    /// Whether a reduced element starts from the data's value (see [`ScatterDesc`]).
    pub use_init_val: bool,
    pub out_of_range: OutOfRange,
    /// In row-major order of the indices.
    pub keyed: Vec<KeyedDim>,
    /// In the updates' order.
    pub free: Vec<FreeDim>,
    /// What `run` returns: the data's sizes, packed.
    pub output: TensorLayout,
}

/// Destination runs and the index positions that write each, in order: the list of run `g` is
/// `members[starts[g]..starts[g + 1]]`. Offsets are in elements (of the destination for
/// `keys`, of the updates for `members`), divided by the plan's lanes (see
/// [`ScatterPlan::lanes`]); for lane words ([`ScatterPlan::lane_words`]) `keys` are words and
/// each member is `element << 2 | lane`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScatterGroups {
    /// Each run's first element in the destination.
    pub keys: Vec<u32>,
    pub starts: Vec<u32>,
    /// Each writing position's first element in the updates.
    pub members: Vec<u32>,
}

impl ScatterGroups {
    /// The lists' starts for each of `runs` runs of `run_keys` keys each lying back to back
    /// (see [`ScatterPlan::back_to_back_runs`]): the list of run `g` is
    /// `members[every[g]..every[g + 1]]`, empty for a run no position writes. `None` when a key
    /// is not the first of such a run, or past the last.
    pub fn every_run(&self, runs: usize, run_keys: usize) -> Option<Vec<u32>> {
        let mut every = Vec::with_capacity(runs + 1);
        for (&key, &start) in self.keys.iter().zip(&self.starts) {
            let key = key as usize;
            if run_keys == 0 || key % run_keys != 0 || key / run_keys >= runs || key / run_keys < every.len()
            {
                return None;
            }
            every.resize(key / run_keys + 1, start);
        }
        let end = self.starts.last().copied().unwrap_or(0);
        every.resize(runs + 1, end);
        Some(every)
    }
}

/// Why indices cannot be scattered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScatterFault {
    /// Under the `error` policy: the first index (row-major over the indices) outside
    /// `[-s, s-1]`.
    OutOfRange { position: Vec<usize>, value: i128, axis_size: usize },
    /// Under `duplicates: error`: two index positions that name one destination (`second` is
    /// the first, in row-major order, that repeats an earlier one).
    Duplicate { first: Vec<usize>, second: Vec<usize> },
}

impl ScatterDesc {
    /// The standard's operator this descriptor's form and rule set name ("ONNX ScatterND-18"),
    /// once the gathers' keys a scatter does not take are found unset.
    pub fn check_keys(&self) -> Result<&'static str, RuleError> {
        let (form, rules) = (self.map.form, self.map.rules);
        let op = rules.scatter_op_name(form).ok_or(RuleError::ScatterRules { form, rules })?;
        let gathers_only = [
            ("batch_dims", self.map.batch_dims.is_some()),
            ("index_dims", self.map.index_dims.is_some()),
            ("feature_level", self.map.feature_level.is_some()),
            ("output", self.map.output.is_some()),
        ];
        match gathers_only.into_iter().find(|&(_, given)| given) {
            Some((key, _)) => Err(RuleError::ScatterKey { op, key }),
            None => Ok(op),
        }
    }

    /// Applies every rule to the sizes as written: the gather's to the indices, then the
    /// scatter's own. A `_` count is planned by `plan` (in `dynamic`), which comes here for a
    /// count.
    pub fn plan_sizes(&self) -> Result<ScatterPlan, RuleError> {
        let (form, rules) = (self.map.form, self.map.rules);
        let op = self.check_keys()?;
        let out_of_range = self.map.out_of_range.unwrap_or(rules.default_out_of_range());
        let gather = GatherDesc { out_of_range: None, ..self.map };
        // ScatterElementsUpdate-12's updates may be smaller than the data in every dimension
        // (GatherElements-6 wants them equal but along the axis).
        let smaller = matches!((rules, form), (GatherRules::OpenVino, GatherForm::Elements));
        let map = gather
            .plan_sizes_with(smaller)
            .map_err(|rule| RuleError::InScatter { op, rule: Box::new(rule) })?;
        let data_type = map.data_type;
        if self.updates.dtype != data_type {
            return Err(RuleError::UpdatesDType { data: data_type, updates: self.updates.dtype });
        }
        let updates = layout(Operand::Updates, self.updates.sizes, self.updates.strides)?;
        if updates.sizes != map.output.sizes {
            return Err(RuleError::UpdatesShape {
                op,
                declared: updates.sizes.to_vec(),
                expected: map.output.sizes.to_vec(),
            });
        }
        check_addressable(Operand::Updates, &updates, data_type.size())?;
        let reduction = self.reduction.unwrap_or_default();
        if !rules.allows_reduction(form, reduction) {
            return Err(RuleError::ReductionNotAllowed { op, reduction });
        }
        let no_bool = matches!(reduction, Reduction::Sub | Reduction::Mean) && data_type == DType::Bool;
        if (reduction != Reduction::None && data_type.size() == 8) || no_bool {
            return Err(RuleError::ReductionType { reduction, dtype: data_type });
        }
        if self.use_init_val.is_some() && !rules.has_init_choice(form) {
            return Err(RuleError::UseInitValNotAllowed { op });
        }
        let use_init_val = self.use_init_val.unwrap_or(true);
        let duplicates = self.duplicates.unwrap_or_default();
        if duplicates == Duplicates::Error && reduction != Reduction::None {
            return Err(RuleError::DuplicatesWithReduction { reduction });
        }
        map.data
            .check_disjoint()
            .map_err(|overlap| RuleError::ScatterOverlap { overlap, strides: map.data.strides.to_vec() })?;
        let (keyed, free) = split(&map);
        let output = TensorLayout::packed(map.data.sizes);
        let plan = ScatterPlan {
            op,
            map,
            updates,
            reduction,
            duplicates,
            use_init_val,
            out_of_range,
            keyed,
            free,
            output,
        };
        // Both destinations: the packed copy `run` returns, and the data `launch` writes.
        plan.check_lanes(&plan.output)?;
        plan.check_lanes(&plan.map.data)?;
        Ok(plan)
    }
}

/// The keyed and free dimensions of a scatter's updates (which, with no batch dimensions, are
/// the gather's output: Gather's data before the axis, the indices, the data after it;
/// GatherElements' indices; GatherND's indices before the tuple, then the data after it).
fn split(map: &GatherPlan) -> (Vec<KeyedDim>, Vec<FreeDim>) {
    let (data_rank, indices_rank) = (map.data.rank(), map.indices.rank());
    let sizes = &map.output.sizes;
    let keyed_dims = match map.form {
        GatherForm::Axis => map.axis..map.axis + indices_rank,
        GatherForm::Elements => 0..data_rank,
        GatherForm::Nd => 0..indices_rank - 1,
    };
    let keyed = keyed_dims
        .clone()
        .map(|u| KeyedDim {
            size: sizes[u],
            indices_dim: u - keyed_dims.start,
            updates_dim: u,
            data_dim: (map.form == GatherForm::Elements && u != map.axis).then_some(u),
        })
        .collect();
    let free = (0..sizes.len())
        .filter(|u| !keyed_dims.contains(u))
        .map(|u| FreeDim {
            size: sizes[u],
            updates_dim: u,
            data_dim: match map.form {
                GatherForm::Axis if u < map.axis => u,
                GatherForm::Axis => u + 1 - indices_rank,
                _ => u - keyed_dims.end + map.axis + map.components,
            },
        })
        .collect();
    (keyed, free)
}

impl ScatterPlan {
    pub fn data_type(&self) -> DType {
        self.map.data_type
    }

    /// Elements of a destination run (the free dimensions' product).
    pub fn run_len(&self) -> usize {
        size_product(self.free.iter().map(|d| d.size))
    }

    /// Elements a kernel invocation takes as one 32-bit word: 4 for 8-bit types, 2 for 16-bit
    /// ones, else 1.
    pub fn lanes(&self) -> usize {
        (4 / self.data_type().size()).max(1)
    }

    /// The free dimensions of size > 1, with their updates and `dest` strides.
    pub fn free_strides<'a>(
        &'a self,
        dest: &'a TensorLayout,
    ) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
        self.free
            .iter()
            .filter(|d| d.size > 1)
            .map(|d| (d.size, self.updates.strides[d.updates_dim], dest.strides[d.data_dim]))
    }

    /// 8- and 16-bit elements are written a whole word at a time: every run must be whole
    /// words, in the updates and in `dest`, starting on a word.
    fn check_lanes(&self, dest: &TensorLayout) -> Result<(), RuleError> {
        let lanes = self.lanes();
        if lanes == 1 || self.map.output.is_empty() {
            return Ok(());
        }
        let fault = |why| RuleError::ScatterLanes { dtype: self.data_type(), why };
        if self.lane_words() {
            // A member carries its lane in its two low bits (see `group`).
            let n = self.updates.min_buffer_len();
            return match n {
                Some(n) if n <= 1 << 30 => Ok(()),
                _ => Err(fault(format!(
                    "each index writes a single element, and updates of more than 2^30 elements ({}) do not fit the kernel's lists",
                    n.map_or("more than the address space".into(), |n| n.to_string())
                ))),
            };
        }
        self.runs_in_blocks(dest, lanes).map_err(fault)
    }

    /// 8- and 16-bit elements written one by one (each index writes a single element, as in
    /// ScatterElements): an invocation takes one destination word and applies, in order, the
    /// updates of each of its elements, so no two invocations write one word.
    pub fn lane_words(&self) -> bool {
        self.lanes() > 1 && self.run_len() == 1
    }

    /// Whether every run is whole blocks of `block` elements, in the updates and in `dest`,
    /// each run starting on a block: the innermost free dimension packed in both and a
    /// multiple of `block` long, every other stride a multiple of `block`. `Err` says why not.
    /// Words of 8- and 16-bit elements need it (`block` = the lanes); a kernel moving vectors
    /// of words takes it where it holds.
    pub fn runs_in_blocks(&self, dest: &TensorLayout, block: usize) -> Result<(), String> {
        if block <= 1 {
            return Ok(());
        }
        let free: Vec<_> = self.free_strides(dest).collect();
        let Some(&(size, updates_stride, dest_stride)) = free.last() else {
            return Err("each index writes a single element".into());
        };
        if updates_stride != 1 || dest_stride != 1 || size % block != 0 {
            return Err(format!(
                "the innermost run of {size} element(s) is not packed in whole words (strides: updates {updates_stride}, data {dest_stride})"
            ));
        }
        let outer = free[..free.len() - 1].iter().flat_map(|&(_, u, d)| [u, d]);
        let keyed =
            self.keyed.iter().filter(|k| k.size > 1).flat_map(|k| {
                [Some(self.updates.strides[k.updates_dim]), k.data_dim.map(|d| dest.strides[d])]
            });
        let axes = self.map.index_axes().filter(|a| a.size > 1).map(|a| dest.strides[a.dim]);
        match outer.chain(keyed.flatten()).chain(axes).find(|s| s % block != 0) {
            Some(s) => Err(format!("a run starts {s} element(s) from the next, not on a word")),
            None => Ok(()),
        }
    }

    /// How many runs `dest` is made of when they lie back to back in the order of their index
    /// values: run `g` (row-major over the index axes) is elements `g * run_len ..` of a packed
    /// `dest`, so the runs cover it, each once. That holds where the index axes lead the data
    /// (axis 0), every other dimension is free (no dimension is both keyed and in the data, as
    /// ScatterElements' are) and every run is whole 32-bit words ([`Self::runs_in_blocks`] of
    /// the lanes: checked here, since a plan with no index position skips that rule): an
    /// embedding's gradient. A kernel can then write every run of a fresh buffer, the ones no
    /// position writes as zeros, with no zero fill first ([`ScatterGroups::every_run`]).
    pub fn back_to_back_runs(&self, dest: &TensorLayout) -> Option<usize> {
        let axes = self.map.index_axes().count();
        let keyed_in_data = self.keyed.iter().any(|k| k.data_dim.is_some());
        let free_in_order = self.free.iter().map(|d| d.data_dim).eq(axes..dest.rank());
        let whole_words = self.runs_in_blocks(dest, self.lanes()).is_ok();
        if self.map.axis != 0 || keyed_in_data || !free_in_order || !dest.is_packed() || !whole_words {
            return None;
        }
        Some(size_product(dest.sizes.as_slice()[..axes].iter().copied()))
    }

    /// Groups the index positions by the destination run they write, each list in the
    /// indices' row-major order, under the policy and the `duplicates` rule. `value(i)` reads
    /// element `i` of the indices buffer; `dest` is the layout written (the packed output, or
    /// the data in place). Under `none` a run's last position alone is kept: it is what wins.
    pub fn group(
        &self,
        dest: &TensorLayout,
        value: impl Fn(usize) -> i128,
    ) -> Result<ScatterGroups, ScatterFault> {
        // Lane words group by element first, then by word (below).
        let lanes = if self.lane_words() { 1 } else { self.lanes() };
        // Each write as `key << 32 | n`, `n` its place in `written` (ordinal, member), grown
        // in row-major order; a stable sort on the keys keeps each run's list in that order.
        // Both fit 32 bits: the plan keeps the data's and the updates' elements below 2^32,
        // and every position writes at least one update element.
        // Sized once, as the lists below: grown by doubling, their new pages took a sixth of the
        // grouping's time.
        let positions = self.positions();
        let mut written: Vec<(usize, u32)> = Vec::with_capacity(positions);
        let mut order: Vec<u64> = Vec::with_capacity(positions);
        self.each_write(dest, &value, |ordinal, key, member| {
            order.push(((key / lanes) as u64) << 32 | written.len() as u64);
            written.push((ordinal, (member / lanes) as u32));
        })?;
        sort_by_key_word(&mut order);
        let mut groups = ScatterGroups {
            keys: Vec::with_capacity(order.len()),
            starts: Vec::with_capacity(order.len() + 1),
            members: Vec::with_capacity(order.len()),
        };
        let mut duplicate: Option<(usize, usize)> = None;
        let mut previous: Option<(u64, usize)> = None; // (key, ordinal)
        for &packed in &order {
            let key = packed >> 32;
            let (ordinal, member) = written[(packed & u64::from(u32::MAX)) as usize];
            let first_of_run = previous.is_none_or(|(k, _)| k != key);
            if first_of_run {
                groups.keys.push(key as u32);
                groups.starts.push(groups.members.len() as u32);
            } else if self.duplicates == Duplicates::Error && duplicate.is_none_or(|(_, s)| ordinal < s) {
                duplicate = previous.map(|(_, o)| (o, ordinal));
            }
            if self.reduction == Reduction::None && !first_of_run {
                // The later write replaces the earlier one in the list of one.
                *groups.members.last_mut().expect("a run has a member") = member;
            } else {
                groups.members.push(member);
            }
            previous = Some((key, ordinal));
        }
        groups.starts.push(groups.members.len() as u32);
        // Sized for one run per write; a backward pass keeps the groups until it runs.
        groups.keys.shrink_to_fit();
        groups.starts.shrink_to_fit();
        groups.members.shrink_to_fit();
        if let Some((first, second)) = duplicate {
            return Err(ScatterFault::Duplicate {
                first: self.position(first, 0),
                second: self.position(second, 0),
            });
        }
        Ok(if self.lane_words() { by_word(&groups, self.lanes() as u32) } else { groups })
    }

    /// The index positions whose write a later position replaces at the same destination (under
    /// `reduction: none` they leave nothing in the result, so a backward pass gives their
    /// updates no gradient), as offsets of their index elements in the indices buffer (a
    /// GatherND tuple's first component), in row-major order. Dropped positions (`zero`,
    /// `skip`) write nothing and are not among them.
    pub fn replaced(
        &self,
        dest: &TensorLayout,
        value: impl Fn(usize) -> i128,
    ) -> Result<Vec<usize>, ScatterFault> {
        let mut writes: Vec<(usize, usize)> = Vec::new(); // (key, ordinal)
        self.each_write(dest, &value, |ordinal, key, _| writes.push((key, ordinal)))?;
        let last: std::collections::HashMap<usize, usize> = writes.iter().copied().collect();
        let strides = &self.map.indices.strides;
        Ok(writes
            .into_iter()
            .filter(|(key, ordinal)| last[key] != *ordinal)
            .map(|(_, ordinal)| {
                self.position(ordinal, 0).iter().zip(strides.iter()).map(|(c, s)| c * s).sum()
            })
            .collect())
    }

    /// How many index positions there are to walk (none when a run is empty).
    fn positions(&self) -> usize {
        if self.run_len() == 0 {
            0
        } else {
            size_product(self.keyed.iter().map(|k| k.size))
        }
    }

    /// `f(ordinal, key, member)` for each index position in row-major order whose write the
    /// policy keeps: its destination run and its first update (see [`Self::destination`]).
    fn each_write(
        &self,
        dest: &TensorLayout,
        value: &impl Fn(usize) -> i128,
        mut f: impl FnMut(usize, usize, usize),
    ) -> Result<(), ScatterFault> {
        let sizes: Vec<usize> = self.keyed.iter().map(|k| k.size).collect();
        let mut c = vec![0; sizes.len()];
        for ordinal in 0..self.positions() {
            if let Some((key, member)) = self.destination(dest, &c, value)? {
                f(ordinal, key, member);
            }
            next_coords(&mut c, &sizes);
        }
        Ok(())
    }

    /// The indices coordinates of the `ordinal`-th index position (row-major), with `component`
    /// as a GatherND tuple's coordinate.
    fn position(&self, mut ordinal: usize, component: usize) -> Vec<usize> {
        let mut c = vec![0; self.map.indices.rank()];
        for k in self.keyed.iter().rev() {
            c[k.indices_dim] = ordinal % k.size.max(1);
            ordinal /= k.size.max(1);
        }
        if self.map.form == GatherForm::Nd {
            if let Some(last) = c.last_mut() {
                *last = component;
            }
        }
        c
    }

    /// The destination run of the index position at keyed coordinates `c`, and its first
    /// update (`None`: the policy drops it).
    fn destination(
        &self,
        dest: &TensorLayout,
        c: &[usize],
        value: &impl Fn(usize) -> i128,
    ) -> Result<Option<(usize, usize)>, ScatterFault> {
        let (mut index_at, mut key, mut member) = (0, 0, 0);
        for (k, &ck) in self.keyed.iter().zip(c) {
            index_at += ck * self.map.indices.strides[k.indices_dim];
            member += ck * self.updates.strides[k.updates_dim];
            if let Some(d) = k.data_dim {
                key += ck * dest.strides[d];
            }
        }
        for (j, axis) in self.map.index_axes().enumerate() {
            let v = value(index_at + axis.offset);
            let s = axis.size as i128;
            let normalized = if v < 0 { v + s } else { v };
            let at = match self.out_of_range {
                OutOfRange::Error if !(-s..s).contains(&v) => {
                    let ordinal = self.keyed.iter().zip(c).fold(0, |o, (k, &ck)| o * k.size + ck);
                    return Err(ScatterFault::OutOfRange {
                        position: self.position(ordinal, j),
                        value: v,
                        axis_size: axis.size,
                    });
                }
                OutOfRange::Skip if !(0..s).contains(&v) => return Ok(None),
                OutOfRange::Zero if !(0..s).contains(&normalized) => return Ok(None),
                OutOfRange::Clamp if s == 0 => return Ok(None),
                OutOfRange::Clamp => normalized.clamp(0, s - 1),
                _ => normalized,
            };
            key += at as usize * dest.strides[axis.dim];
        }
        Ok(Some((key, member)))
    }
}

/// Element groups (of a lane-words scatter) merged by the 32-bit word holding them: each
/// member becomes `member << 2 | lane`, the lane of its element in the word. The elements'
/// lists stay in order; lists of different elements touch different bits, so their order in
/// the word's list does not matter.
fn by_word(elements: &ScatterGroups, lanes: u32) -> ScatterGroups {
    let mut words = ScatterGroups::default();
    for (g, &elem) in elements.keys.iter().enumerate() {
        let word = elem / lanes;
        if words.keys.last() != Some(&word) {
            words.keys.push(word);
            words.starts.push(words.members.len() as u32);
        }
        let list = &elements.members[elements.starts[g] as usize..elements.starts[g + 1] as usize];
        words.members.extend(list.iter().map(|m| (m << 2) | (elem % lanes)));
    }
    words.starts.push(words.members.len() as u32);
    words
}

/// Sorts packed writes by their high 32 bits (the key), stably: a least-significant-digit
/// radix sort in 16-bit digits, linear in the writes (an embedding's backward or a
/// ScatterElements has millions; a comparison sort spent most of the grouping's time).
fn sort_by_key_word(order: &mut Vec<u64>) {
    const DIGIT: u32 = 16;
    if order.len() < 1 << DIGIT {
        // Few writes: the packed numbers are distinct (each `n` is), so any sort is stable.
        order.sort_unstable();
        return;
    }
    let top = order.iter().map(|w| w >> 32).max().unwrap_or(0);
    let mut spare = vec![0u64; order.len()];
    let mut shift = 32;
    while shift < 64 && (shift == 32 || top >> (shift - 32) != 0) {
        let digit = |w: u64| ((w >> shift) & ((1 << DIGIT) - 1)) as usize;
        let mut starts = vec![0usize; (1 << DIGIT) + 1];
        for &w in order.iter() {
            starts[digit(w) + 1] += 1;
        }
        for d in 0..1 << DIGIT {
            starts[d + 1] += starts[d];
        }
        for &w in order.iter() {
            let d = digit(w);
            spare[starts[d]] = w;
            starts[d] += 1;
        }
        std::mem::swap(order, &mut spare);
        shift += DIGIT;
    }
}
