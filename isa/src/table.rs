//! Vocabulary of the instruction table: pipelines, contexts, timing classes, families and the basis of each fact.

/// How well a fact is established (the tags of `docs/reference`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Basis {
    /// A public source states it for ipu2/ipu21.
    Confirmed,
    /// A public source states it for ipu1; assumed to carry over.
    ConfirmedIpu1,
    /// Deduced from public evidence.
    Inferred,
    /// From a third-party or reverse-engineered source.
    Secondary,
    /// No public fact: the project's own documented choice.
    Assumed,
}

impl Basis {
    pub fn tag(self) -> &'static str {
        match self {
            Basis::Confirmed => "[C]",
            Basis::ConfirmedIpu1 => "[C-ipu1]",
            Basis::Inferred => "[I]",
            Basis::Secondary => "[S]",
            Basis::Assumed => "[A]",
        }
    }
}

/// The pipeline an instruction issues to. A bundle holds at most one of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pipe {
    /// Integer, control, memory, MRF.
    Main,
    /// Floating point, ARF.
    Aux,
}

/// Which contexts may execute an instruction; others trap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Contexts {
    Worker,
    Supervisor,
    Both,
}

impl Contexts {
    pub fn allows(self, supervisor: bool) -> bool {
        match self {
            Contexts::Worker => !supervisor,
            Contexts::Supervisor => supervisor,
            Contexts::Both => true,
        }
    }
}

/// Whether an instruction may share a bundle with an instruction of the other pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoIssue {
    /// May be paired in `{ main ; aux }`.
    Pairable,
    /// Must stand alone (`run`, `runall`, `exit*`, `sync`, `send`, `delay`). [C]
    Solo,
}

/// What an instruction costs beyond one issue slot; the simulator's machine file gives the numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimingClass {
    /// One issue, result ready for the thread's next bundle.
    Simple,
    /// A load (on the supervisor, as every MRF write, a dependent instruction waits
    /// `result_use` cycles after it).
    Load,
    /// A branch: on the supervisor, a taken branch stalls `taken_branch` cycles.
    Branch,
    /// A CSR write: the supervisor stalls `csr_write` cycles.
    CsrWrite,
    /// `run`/`runall`: the supervisor stalls `run` cycles.
    Launch,
    /// `sync`: waits for the zone, then stalls `sync` cycles.
    Sync,
    /// Exchange send: one word per cycle on the outgoing wires.
    Exchange,
    /// `delay`: stalls for its operand's cycles.
    Delay,
    /// Ends the worker.
    Exit,
    /// `rpt`: starts a zero-overhead loop; its worker's next bundle waits the machine's
    /// `worker.repeat_rounds` issue rounds (1: no set-up cost).
    Repeat,
    /// `f32div` (aux): its worker's next bundle waits the machine's `worker.divide_rounds`
    /// issue rounds instead of one (PopLibs: "1 or 3 cycles depending on input"; its cycle
    /// estimators charge 3).
    Divide,
}

/// Families group the instruction reference into pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Integer,
    Control,
    Csr,
    LoadStore,
    Pace,
    FloatArith,
    Accumulate,
    Transcendental,
    Convert,
    Permute,
    Amp,
    Supervisor,
}

impl Family {
    pub const ALL: [Family; 12] = [
        Family::Integer,
        Family::Control,
        Family::Csr,
        Family::LoadStore,
        Family::Pace,
        Family::FloatArith,
        Family::Accumulate,
        Family::Transcendental,
        Family::Convert,
        Family::Permute,
        Family::Amp,
        Family::Supervisor,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Family::Integer => "Integer arithmetic and logic",
            Family::Control => "Control flow",
            Family::Csr => "CSR access instructions",
            Family::LoadStore => "Loads and stores",
            Family::Pace => "Triple-packed (pace) memory access",
            Family::FloatArith => "Floating-point arithmetic and compares",
            Family::Accumulate => "Accumulator instructions",
            Family::Transcendental => "Transcendental and special functions",
            Family::Convert => "Conversions (including FP8)",
            Family::Permute => "Permutes",
            Family::Amp => "AMP (accumulating matrix product)",
            Family::Supervisor => "Supervisor: workers, sync, exchange, weights",
        }
    }

    pub fn slug(self) -> &'static str {
        match self {
            Family::Integer => "integer",
            Family::Control => "control",
            Family::Csr => "csr",
            Family::LoadStore => "load-store",
            Family::Pace => "pace",
            Family::FloatArith => "float-arith",
            Family::Accumulate => "accumulate",
            Family::Transcendental => "transcendental",
            Family::Convert => "convert",
            Family::Permute => "permute",
            Family::Amp => "amp",
            Family::Supervisor => "supervisor",
        }
    }
}
