//! Expressions in immediates and data: the AST, operator precedence (C rules) and evaluation.
//!
//! Comparisons give -1 for true and 0 for false, and `&&`, `||` and `!` give 1 or 0, as in GNU
//! as; precedence stays C's (GNU as ranks `&`, `|`, `^` above `+` and `==`: parenthesise).

use super::error::{make, AsmError, Loc};
use super::lexer::Pos;

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
    Plus,
    /// `!`: 1 if the operand is 0, else 0.
    LogicalNot,
}

/// Binary operators, with C precedence (see [`BinaryOp::precedence`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    And,
    Xor,
    Or,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    LogicalAnd,
    LogicalOr,
}

impl BinaryOp {
    /// Higher binds tighter (C): `* / %` 10, `+ -` 9, `<< >>` 8, `< > <= >=` 7, `== !=` 6,
    /// `&` 5, `^` 4, `|` 3, `&&` 2, `||` 1.
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 10,
            BinaryOp::Add | BinaryOp::Sub => 9,
            BinaryOp::Shl | BinaryOp::Shr => 8,
            BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge => 7,
            BinaryOp::Eq | BinaryOp::Ne => 6,
            BinaryOp::And => 5,
            BinaryOp::Xor => 4,
            BinaryOp::Or => 3,
            BinaryOp::LogicalAnd => 2,
            BinaryOp::LogicalOr => 1,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::And => "&",
            BinaryOp::Xor => "^",
            BinaryOp::Or => "|",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Gt => ">",
            BinaryOp::Le => "<=",
            BinaryOp::Ge => ">=",
            BinaryOp::LogicalAnd => "&&",
            BinaryOp::LogicalOr => "||",
        }
    }
}

/// An expression as written. Values are 64-bit two's complement; arithmetic wraps.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Num(i64, Pos),
    /// A named symbol (label, `.equ`, or predefined constant).
    Sym {
        name: String,
        pos: Pos,
    },
    /// A numeric local label reference (`1f`, `1b`); `name` is the internal name of the label it
    /// resolves to (the parser assigns it).
    Local {
        n: u32,
        forward: bool,
        name: String,
        pos: Pos,
    },
    /// `.`: the address of the current statement.
    Dot(Pos),
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
        pos: Pos,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
        pos: Pos,
    },
}

impl Expr {
    /// Where the expression starts.
    pub fn pos(&self) -> Pos {
        match self {
            Expr::Num(_, pos)
            | Expr::Sym { pos, .. }
            | Expr::Local { pos, .. }
            | Expr::Dot(pos)
            | Expr::Unary { pos, .. } => *pos,
            Expr::Binary { left, .. } => left.pos(),
        }
    }

    /// Whether the expression mentions a symbol, a local label or `.`.
    pub fn is_constant(&self) -> bool {
        match self {
            Expr::Num(..) => true,
            Expr::Sym { .. } | Expr::Local { .. } | Expr::Dot(_) => false,
            Expr::Unary { operand, .. } => operand.is_constant(),
            Expr::Binary { left, right, .. } => left.is_constant() && right.is_constant(),
        }
    }
}

/// What an expression can ask of the assembler while being evaluated.
pub trait Env {
    /// File name for error locations of the expression being evaluated.
    fn file(&self) -> &str;
    /// Value of a symbol (errors: undefined, not constant here, circular definition).
    fn symbol(&self, name: &str, loc: Loc) -> Result<i64, AsmError>;
    /// Value of `.`.
    fn dot(&self, loc: Loc) -> Result<i64, AsmError>;
}

/// Evaluates an expression. Never panics: division by zero and shifts outside 0..=63 are errors.
pub fn eval(expr: &Expr, env: &dyn Env) -> Result<i64, AsmError> {
    let loc = |pos: Pos| Loc::at(env.file(), pos);
    match expr {
        Expr::Num(value, _) => Ok(*value),
        Expr::Sym { name, pos } => env.symbol(name, loc(*pos)),
        Expr::Local {
            n,
            forward,
            name,
            pos,
        } => env.symbol(name, loc(*pos)).map_err(|error| {
            // Only "undefined" is reworded, to name the local label as it was written.
            let AsmError::UndefinedSymbol { loc, .. } = error else {
                return error;
            };
            make::UndefinedSymbol(
                loc,
                format!(
                    "local label `{n}{}` has no {} `{n}:`",
                    if *forward { 'f' } else { 'b' },
                    if *forward { "following" } else { "preceding" }
                ),
            )
        }),
        Expr::Dot(pos) => env.dot(loc(*pos)),
        Expr::Unary { op, operand, .. } => {
            let value = eval(operand, env)?;
            Ok(match op {
                UnaryOp::Neg => value.wrapping_neg(),
                UnaryOp::Not => !value,
                UnaryOp::Plus => value,
                UnaryOp::LogicalNot => (value == 0) as i64,
            })
        }
        Expr::Binary {
            op,
            left,
            right,
            pos,
        } => {
            let a = eval(left, env)?;
            let b = eval(right, env)?;
            let fail = |message: String| make::BadExpression(loc(*pos), message);
            Ok(match op {
                BinaryOp::Mul => a.wrapping_mul(b),
                BinaryOp::Div | BinaryOp::Rem if b == 0 => {
                    return Err(fail(format!("division by zero in `{a} {} {b}`", op.text())))
                }
                BinaryOp::Div => a.wrapping_div(b),
                BinaryOp::Rem => a.wrapping_rem(b),
                BinaryOp::Add => a.wrapping_add(b),
                BinaryOp::Sub => a.wrapping_sub(b),
                BinaryOp::Shl | BinaryOp::Shr if !(0..64).contains(&b) => {
                    return Err(fail(format!("shift amount {b} is outside 0..=63")))
                }
                BinaryOp::Shl => a << b,
                BinaryOp::Shr => a >> b,
                BinaryOp::And => a & b,
                BinaryOp::Xor => a ^ b,
                BinaryOp::Or => a | b,
                BinaryOp::Eq => -((a == b) as i64),
                BinaryOp::Ne => -((a != b) as i64),
                BinaryOp::Lt => -((a < b) as i64),
                BinaryOp::Gt => -((a > b) as i64),
                BinaryOp::Le => -((a <= b) as i64),
                BinaryOp::Ge => -((a >= b) as i64),
                BinaryOp::LogicalAnd => (a != 0 && b != 0) as i64,
                BinaryOp::LogicalOr => (a != 0 || b != 0) as i64,
            })
        }
    }
}

/// An environment with no symbols other than a fixed table and no `.` (for constant contexts).
pub struct ConstEnv<'a> {
    pub file: &'a str,
    pub symbols: &'a [(&'a str, i64)],
}

impl Env for ConstEnv<'_> {
    fn file(&self) -> &str {
        self.file
    }

    fn symbol(&self, name: &str, loc: Loc) -> Result<i64, AsmError> {
        self.symbols
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| make::UndefinedSymbol(loc, format!("undefined symbol `{name}`")))
    }

    fn dot(&self, loc: Loc) -> Result<i64, AsmError> {
        Err(make::BadExpression(loc, "`.` has no value here"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(v: i64) -> Box<Expr> {
        Box::new(Expr::Num(v, Pos::default()))
    }

    #[test]
    fn arithmetic_and_errors() {
        let env = ConstEnv {
            file: "t.S",
            symbols: &[("X", 5)],
        };
        let p = Pos::at(1, 1);
        let e = Expr::Binary {
            op: BinaryOp::Shl,
            left: num(1),
            right: Box::new(Expr::Sym {
                name: "X".into(),
                pos: p,
            }),
            pos: p,
        };
        assert_eq!(eval(&e, &env).unwrap(), 32);
        let e = Expr::Binary {
            op: BinaryOp::Div,
            left: num(i64::MIN),
            right: num(-1),
            pos: p,
        };
        assert_eq!(eval(&e, &env).unwrap(), i64::MIN);
        let e = Expr::Binary {
            op: BinaryOp::Rem,
            left: num(1),
            right: num(0),
            pos: p,
        };
        assert_eq!(eval(&e, &env).unwrap_err().id(), "E-ASM-014");
        let e = Expr::Binary {
            op: BinaryOp::Shr,
            left: num(1),
            right: num(64),
            pos: p,
        };
        assert!(eval(&e, &env).is_err());
    }
}
