//! Text dump of a mid-level program, one line per value.

use super::{Distribution, MidOp, MidProgram, Order};
use std::fmt::Write;

fn distribution(d: &Distribution) -> String {
    let blocks = |cols: &Vec<std::ops::Range<u32>>| {
        let widths: Vec<u32> = cols.iter().map(|c| c.end - c.start).collect();
        let (min, max) = (
            widths.iter().min().copied().unwrap_or(0),
            widths.iter().max().copied().unwrap_or(0),
        );
        if min == max {
            format!("{min}")
        } else {
            format!("{min}..{max}")
        }
    };
    match d {
        Distribution::RowSegments => "row-segments".into(),
        Distribution::RowBlocks => "row-blocks".into(),
        Distribution::Blocks { cols } => format!("blocks(cols {})", blocks(cols)),
        Distribution::WeightColumns { cols } => format!("weight-columns({})", blocks(cols)),
        Distribution::VectorColumns { cols } => format!("vector-columns({})", blocks(cols)),
        Distribution::Replicated => "replicated".into(),
    }
}

fn order(o: Order) -> String {
    match o {
        Order::RowMajor { stride } => format!("rows/{stride}"),
        Order::Panels => "panels".into(),
        Order::CweiBlocks => "cwei".into(),
        Order::Vector => "vector".into(),
    }
}

/// `%k: fmt[rows, cols] @ distribution/order = op operands  // name`.
pub fn dump(program: &MidProgram) -> String {
    let grid = &program.grid;
    let mut out = format!(
        "grid {}x{} ({} tiles), row blocks of {}..{}\n",
        grid.tm,
        grid.tn,
        grid.tiles(),
        grid.rows.iter().map(|r| r.len()).min().unwrap_or(0),
        grid.rows.iter().map(|r| r.len()).max().unwrap_or(0)
    );
    for (k, (op, value)) in program.ops.iter().zip(&program.values).enumerate() {
        let operands: Vec<String> = op.operands().iter().map(|v| format!("%{}", v.0)).collect();
        let extra = match op {
            MidOp::Input { tensor } | MidOp::Weight { tensor } | MidOp::Output { tensor, .. } => {
                format!(" \"{tensor}\"")
            }
            MidOp::LayerNorm { eps, .. } => format!(", eps={eps:e}"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "%{k}: {}[{}, {}] @ {}/{} = {} {}{}  // {}",
            value.layout.format.name(),
            value.rows,
            value.cols,
            distribution(&value.layout.distribution),
            order(value.layout.order),
            op.name(),
            operands.join(", "),
            extra,
            value.name
        );
    }
    out
}
