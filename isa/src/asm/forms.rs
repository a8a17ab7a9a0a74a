//! Assembler forms: shorthand spellings PopLibs writes that mean an existing table row with
//! some operands implied. This is the one list of them; `assemble::resolve` tries a form only
//! when no row matches the operands as written, and the printer always writes the full row.
//!
//! A form names the mnemonics it covers (by the shape of their rows, so a new row of the same
//! shape is covered too), the written operands it accepts, and how they become a row's
//! operands. The one pseudo-instruction that stands for more than one row, `ldconst`, is here
//! too ([`LDCONST`]).

use super::expr::Expr;
use super::parser::{InstStmt, Operand, OperandValue, RegMark, RegOperand};
use super::stmt::Broadcast;
use crate::csr::CsrSpace;
use crate::inst::{Access, InstDesc, OperandKind};
use crate::registers::{RegisterFile, A_ZERO, A_ZEROS_LOW};
use crate::table::Family;

/// `$m15` (`$mzero`), the delta register an omitted delta means.
const M_ZERO: RegOperand = RegOperand {
    file: RegisterFile::M,
    first: 15,
    width: 1,
    mark: RegMark::Plain,
    broadcast: None,
};

/// `$azero` (`$a15`).
const A_ZERO_REG: RegOperand = RegOperand {
    file: RegisterFile::A,
    first: A_ZERO,
    width: 1,
    mark: RegMark::Plain,
    broadcast: None,
};

/// `$azeros` (`$a14:15`).
const A_ZEROS: RegOperand = RegOperand {
    file: RegisterFile::A,
    first: A_ZEROS_LOW,
    width: 2,
    mark: RegMark::Plain,
    broadcast: None,
};

/// One shorthand.
pub struct Form {
    /// How the documentation and errors name it.
    pub name: &'static str,
    /// The written syntax, for messages (`{op}` stands for the mnemonic).
    pub written: &'static str,
    /// What it means.
    pub means: &'static str,
    /// The written mnemonic (any whose rows fit `row` when `None`).
    pub mnemonic: Option<&'static str>,
    /// The mnemonic the full form uses (the written one when `None`).
    pub target: Option<&'static str>,
    /// Whether a row of the target mnemonic can take the rewritten operands.
    pub row: fn(&InstDesc) -> bool,
    /// The row's operands from the written ones, or `None` when the form does not apply.
    pub rewrite: fn(&[Operand]) -> Option<Vec<Operand>>,
    /// Whether an operand error names it as a shorthand of the mnemonic (not for other
    /// spellings of one operand, which would follow every error of many mnemonics).
    pub listed: bool,
}

/// Every form, tried in this order.
pub const FORMS: &[Form] = &[
    Form {
        name: "implied zero delta",
        written: "{op} $x, $mBase, imm",
        means: "{op} $x, $mBase, $mzero, imm",
        mnemonic: None,
        target: None,
        row: base_delta_offset_row,
        rewrite: insert_zero_delta,
        listed: true,
    },
    Form {
        name: "implied zero delta, register offset",
        written: "{op} $x, $mBase, $mOffset",
        means: "{op} $x, $mBase, $mzero, $mOffset (the offset scaled by the access size) [I]",
        mnemonic: None,
        target: None,
        row: base_delta_register_offset_row,
        rewrite: insert_zero_delta_before_register,
        listed: true,
    },
    Form {
        name: "move an ARF pair",
        written: "mov $aD:D+1, $aS:S+1",
        means: "or64 $aD:D+1, $aS:S+1, $azeros (ASM-DOC `mov.md`: `mov` compiles to `or`) [C]",
        mnemonic: Some("mov"),
        target: Some("or64"),
        row: |row| row.mnemonic == "or64",
        rewrite: move_pair,
        listed: true,
    },
    Form {
        name: "zero a register",
        written: "zero $x",
        means: "or $mD, $mzero, 0 / or $aD, $azero, 0 / or64 $aD:D+1, $azeros, $azeros (ASM-DOC `zero.md`: an alias of `or`) [C]",
        mnemonic: Some("zero"),
        target: Some("or"),
        row: |row| row.mnemonic == "or",
        rewrite: zero_single,
        listed: true,
    },
    Form {
        name: "zero a pair",
        written: "zero $aN:N+1",
        means: "or64 $aN:N+1, $azeros, $azeros [C]",
        mnemonic: Some("zero"),
        target: Some("or64"),
        row: |row| row.mnemonic == "or64",
        rewrite: zero_pair_alone,
        listed: true,
    },
    Form {
        name: "move an ARF register into the MRF",
        written: "mov $mD, $aS",
        means: "atom $mD, $aS (ASM-DOC `mov.md`: `mov` compiles to `or` or `atom`) [C]",
        mnemonic: Some("mov"),
        target: Some("atom"),
        row: |row| row.mnemonic == "atom",
        rewrite: mrf_from_arf,
        listed: true,
    },
    Form {
        name: "read an upper-space CSR with get",
        written: "get $aD, $CSR",
        means: "uget $aD, $CSR: the one instruction that reads an upper-space (worker FP) CSR into the ARF; PopLibs writes `get $a6, $TAS` (`vectorInnerAdd_half.S`) and Graphcore's assembler builds it [I]",
        mnemonic: Some("get"),
        target: Some("uget"),
        row: |row| row.mnemonic == "uget",
        rewrite: upper_csr_read,
        listed: true,
    },
    Form {
        name: "write an upper-space CSR with put",
        written: "put $CSR, $aS",
        means: "uput $CSR, $aS, the counterpart of `get $aD, $CSR` [I]",
        mnemonic: Some("put"),
        target: Some("uput"),
        row: |row| row.mnemonic == "uput",
        rewrite: upper_csr_write,
        listed: true,
    },
    Form {
        name: "`$azero` where an MRF register is read",
        written: "{op} ..., $azero, ...",
        means: "{op} ..., $mzero, ...: `$azero` and `$mzero` are both register 15 of their file and read 0; PopLibs writes `ld32 $aD, $mBase, $azero, imm` (`NonLinearityGrad1D_gelu.S`) and Graphcore's assembler builds it [I]",
        mnemonic: None,
        target: None,
        row: |row| {
            row.operands
                .iter()
                .skip(1)
                .any(|o| o.kind == OperandKind::MReg && o.access == Access::Read)
        },
        rewrite: azero_as_mzero,
        listed: false,
    },
    Form {
        name: "broadcast spellings `:B` and `:BL`",
        written: "{op} $aD, $aS:B, ... / {op} $aD, $aS:BL, ...",
        means: "the one broadcast of the register's low element, encoding 0b10 in bits [19:18] for f16 (`:BL`, LLVM-TD-W `*_aaal`) and f32 (`:B`) alike: PopLibs writes `f16v4mul ..., $x:B, ...` (`OuterProduct.S`) and `f32v2mul ..., $x:BL, ...` (`TruncatedNormal.S`) [I]",
        mnemonic: None,
        target: None,
        row: |row| {
            row.operands
                .iter()
                .any(|o| matches!(o.kind, OperandKind::ABroadcast | OperandKind::ABroadcastLo))
        },
        rewrite: swap_low_broadcast,
        listed: false,
    },
];

/// `ldconst $x, value`: a 32-bit constant into an MRF or ARF register, a pseudo-instruction of
/// one or two rows. ASM-DOC (`ldconst.md`) says it loads 32-bit constants in two instructions
/// and compiles to `setzi`; PopLibs writes the two out by hand where it bundles them
/// (`Pooling.S`: `setzi $a0, V & LDCONST_MASK` then `or $a0, $a0, V & ~LDCONST_MASK`, with
/// `LDCONST_MASK` = 2^20 − 1). So the expansion is `setzi $x, value & 0xfffff` followed by
/// `or $x, $x, value & 0xfff00000` (the zero-tailed `or`) [I]. A value the layout can evaluate
/// and that fits 20 bits is the `setzi` alone [A] (the size must be known before addresses are;
/// a value it cannot evaluate yet takes both words). `ldconst` cannot share a bundle.
pub const LDCONST: &str = "ldconst";

/// Words an `ldconst` of `value` occupies (`None`: not known when the layout is made).
pub fn ldconst_words(value: Option<i64>) -> u32 {
    match value {
        Some(v) if (0..=0xf_ffff).contains(&v) => 1,
        Some(_) | None => 2,
    }
}

/// The instructions an `ldconst` of `value` in `words` words stands for, or why it cannot be.
pub fn ldconst_expansion(stmt: &InstStmt, value: i64, words: u32) -> Result<Vec<InstStmt>, String> {
    let [dst, _] = stmt.operands.as_slice() else {
        return Err("`ldconst` expects: $mN|$aN, imm".into());
    };
    if !matches!(&dst.value, OperandValue::Reg(r) if r.width == 1 && r.mark == RegMark::Plain) {
        return Err("`ldconst` loads one MRF or ARF register: `ldconst $mN|$aN, imm`".into());
    }
    if !(-(1i64 << 31)..=u32::MAX as i64).contains(&value) {
        return Err(format!("`ldconst` value {value} does not fit in 32 bits"));
    }
    let bits = value as u32;
    let (low, high) = (bits & 0xf_ffff, bits & 0xfff0_0000);
    if words == 1 && high != 0 {
        return Err(format!(
            "`ldconst` value {value:#x} changed after layout and no longer fits one `setzi`"
        ));
    }
    let num = |v: u32| Operand {
        pos: stmt.operands[1].pos,
        value: OperandValue::Expr(Expr::Num(v as i64, stmt.operands[1].pos)),
    };
    let inst = |mnemonic: &str, operands: Vec<Operand>| InstStmt {
        mnemonic: mnemonic.to_string(),
        pos: stmt.pos,
        operands,
    };
    let mut out = vec![inst("setzi", vec![dst.clone(), num(low)])];
    if words == 2 {
        out.push(inst("or", vec![dst.clone(), dst.clone(), num(high)]));
    }
    Ok(out)
}

/// Loads and stores `op x, $mBase, $mDelta, zimm`: the rows an omitted delta applies to.
fn base_delta_offset_row(row: &InstDesc) -> bool {
    let [_, base, delta, offset] = row.operands else {
        return false;
    };
    row.family == Family::LoadStore
        && base.kind == OperandKind::MReg
        && delta.kind == OperandKind::MReg
        && delta.access == Access::Read
        && offset.kind == OperandKind::Unsigned
}

/// Loads and stores `op x, $mBase, $mDelta, $mOffset`.
fn base_delta_register_offset_row(row: &InstDesc) -> bool {
    let [_, base, delta, offset] = row.operands else {
        return false;
    };
    row.family == Family::LoadStore
        && base.kind == OperandKind::MReg
        && delta.kind == OperandKind::MReg
        && delta.access == Access::Read
        && offset.kind == OperandKind::MReg
}

/// `x, $mBase, $mOffset` → `x, $mBase, $mzero, $mOffset`. The written register is the (scaled)
/// offset, not the delta [I]: PopLibs indexes tables with it, `ld32 $partition_struct,
/// $partition_table, $worker_id` reading word `$worker_id` of the table (`conv_hzmac_common.h.S`).
fn insert_zero_delta_before_register(written: &[Operand]) -> Option<Vec<Operand>> {
    let [x, base, offset] = written else {
        return None;
    };
    if !matches!(&offset.value, OperandValue::Reg(r) if r.file == RegisterFile::M && r.width == 1 && r.mark == RegMark::Plain && r.broadcast.is_none())
    {
        return None;
    }
    let delta = Operand {
        pos: offset.pos,
        value: OperandValue::Reg(M_ZERO),
    };
    Some(vec![x.clone(), base.clone(), delta, offset.clone()])
}

/// `x, $mBase, imm` → `x, $mBase, $mzero, imm`.
fn insert_zero_delta(written: &[Operand]) -> Option<Vec<Operand>> {
    let [x, base, offset] = written else {
        return None;
    };
    if !matches!(offset.value, OperandValue::Expr(_)) {
        return None;
    }
    let delta = Operand {
        pos: offset.pos,
        value: OperandValue::Reg(M_ZERO),
    };
    Some(vec![x.clone(), base.clone(), delta, offset.clone()])
}

/// `$aD:D+1, $aS:S+1` → `$aD:D+1, $aS:S+1, $azeros`.
fn move_pair(written: &[Operand]) -> Option<Vec<Operand>> {
    let [dst, src] = written else {
        return None;
    };
    let is_pair = |op: &Operand| matches!(&op.value, OperandValue::Reg(r) if r.file == RegisterFile::A && r.width == 2 && r.mark == RegMark::Plain);
    let zeros = Operand {
        pos: src.pos,
        value: OperandValue::Reg(A_ZEROS),
    };
    (is_pair(dst) && is_pair(src)).then(|| vec![dst.clone(), src.clone(), zeros])
}

/// `$aN:N+1` → `$aN:N+1, $azeros, $azeros`.
fn zero_pair_alone(written: &[Operand]) -> Option<Vec<Operand>> {
    let [dst] = written else {
        return None;
    };
    let is_pair = matches!(&dst.value, OperandValue::Reg(r) if r.file == RegisterFile::A && r.width == 2 && r.mark == RegMark::Plain);
    let zeros = Operand {
        pos: dst.pos,
        value: OperandValue::Reg(A_ZEROS),
    };
    is_pair.then(|| vec![dst.clone(), zeros.clone(), zeros])
}

/// `$x` → `$x, $mzero, 0` or `$x, $azero, 0` (the register file of `$x`).
fn zero_single(written: &[Operand]) -> Option<Vec<Operand>> {
    let [dst] = written else {
        return None;
    };
    let OperandValue::Reg(reg) = &dst.value else {
        return None;
    };
    if reg.width != 1 || reg.mark != RegMark::Plain {
        return None;
    }
    let zero = match reg.file {
        RegisterFile::M => M_ZERO,
        RegisterFile::A => A_ZERO_REG,
    };
    let source = Operand {
        pos: dst.pos,
        value: OperandValue::Reg(zero),
    };
    let imm = Operand {
        pos: dst.pos,
        value: OperandValue::Expr(Expr::Num(0, dst.pos)),
    };
    Some(vec![dst.clone(), source, imm])
}

fn is_single(op: &Operand, file: RegisterFile) -> bool {
    matches!(&op.value, OperandValue::Reg(r) if r.file == file && r.width == 1 && r.mark == RegMark::Plain && r.broadcast.is_none())
}

/// `$mD, $aS` as written.
fn mrf_from_arf(written: &[Operand]) -> Option<Vec<Operand>> {
    let [dst, src] = written else {
        return None;
    };
    (is_single(dst, RegisterFile::M) && is_single(src, RegisterFile::A)).then(|| written.to_vec())
}

fn is_upper_csr(op: &Operand) -> bool {
    matches!(&op.value, OperandValue::Csr(csr) if csr.space == CsrSpace::Upper)
}

/// `$aD, $CSR` (an upper-space CSR) as written.
fn upper_csr_read(written: &[Operand]) -> Option<Vec<Operand>> {
    let [dst, csr] = written else {
        return None;
    };
    (is_single(dst, RegisterFile::A) && is_upper_csr(csr)).then(|| written.to_vec())
}

/// `$CSR, $aS` (an upper-space CSR) as written.
fn upper_csr_write(written: &[Operand]) -> Option<Vec<Operand>> {
    let [csr, src] = written else {
        return None;
    };
    (is_upper_csr(csr) && is_single(src, RegisterFile::A)).then(|| written.to_vec())
}

/// Every `$azero` after the first operand as `$mzero`; `None` when there is none.
fn azero_as_mzero(written: &[Operand]) -> Option<Vec<Operand>> {
    let mut out = written.to_vec();
    let mut changed = false;
    for op in out.iter_mut().skip(1) {
        if matches!(&op.value, OperandValue::Reg(r) if *r == A_ZERO_REG) {
            op.value = OperandValue::Reg(M_ZERO);
            changed = true;
        }
    }
    changed.then_some(out)
}

/// Every `:B` as `:BL` and every `:BL` as `:B`; `None` when there is neither.
fn swap_low_broadcast(written: &[Operand]) -> Option<Vec<Operand>> {
    let mut out = written.to_vec();
    let mut changed = false;
    for op in &mut out {
        if let OperandValue::Reg(r) = &mut op.value {
            r.broadcast = match r.broadcast {
                Some(Broadcast::Word) => Some(Broadcast::Low),
                Some(Broadcast::Low) => Some(Broadcast::Word),
                other @ (Some(Broadcast::High) | None) => other,
            };
            changed |= r.broadcast != Some(Broadcast::High) && r.broadcast.is_some();
        }
    }
    changed.then_some(out)
}

/// The forms that can apply to an instruction written with `mnemonic`.
pub fn forms_for(mnemonic: &str) -> impl Iterator<Item = &'static Form> + '_ {
    FORMS
        .iter()
        .filter(move |form| form.mnemonic.is_none_or(|m| m == mnemonic))
}

impl Form {
    /// The mnemonic of the rows this form resolves to, for an instruction written `mnemonic`.
    pub fn target_mnemonic<'a>(&self, mnemonic: &'a str) -> &'a str
    where
        'static: 'a,
    {
        self.target.unwrap_or(mnemonic)
    }
}
