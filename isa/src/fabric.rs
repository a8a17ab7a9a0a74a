//! The exchange fabric's geometry, as far as a `send` needs it: which of the two fabric
//! directions carries a word from one tile to another, the bits a `send`'s 3-bit control
//! (`sctl`) sets for it, and the route function the hardware's timing rows are built on.
//!
//! Facts (docs/reference/hardware-ipu-stack.md §1.1, §1.3 and appendix A, restated from
//! osmarks/ipu-stack's `topology.rs`, whose rows run on a C600 and reproduce the SDK's vectors):
//! - `sctl` bits 0 and 1 turn on the two fabric directions; 3 (both) is what multicast uses; bit
//!   2 selects 64-bit items; `sctl = 0` puts nothing on the fabric. A single receiver is reached
//!   in the direction [`direction`] gives.
//! - Physical tile id = row · 64 + column position, 23 rows; logical pair k = (2k, 2k + 1) sits at
//!   physical (p, p ^ 2), blocks of 23 pairs filling one column position down and up the rows
//!   alternately.
//!
//! Only the ipu21's 1472 tiles have this geometry ([`Fabric::Ipu21`]); a machine of another
//! size has a [`Fabric::Uniform`] one, where either direction reaches every tile.

use serde::{Deserialize, Serialize};

/// The geometry of a machine's exchange fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Fabric {
    /// No geometry: every direction reaches every tile (machines other than the ipu21).
    #[default]
    Uniform,
    /// The ipu21's 23 rows of 64 tiles (1472), its snake numbering and its route function.
    Ipu21,
}

/// The XPIC value that selects no sender ("exchange", the neutral source): every receive ends by
/// switching the mux to it \[S\] (hardware-ipu-stack.md §1.2). Other XPIC values name the sending
/// tile by its physical id on the ipu21 \[S\] ([`Fabric::xpic`]; `0x600 + x` names the host),
/// by its own number on a uniform fabric.
pub const XPIC_NEUTRAL: u32 = 0x640;

/// `sctl` bit of the first fabric direction.
pub const DIRECTION_1: u32 = 1;
/// `sctl` bit of the second fabric direction.
pub const DIRECTION_2: u32 = 2;
/// `sctl` bit of 64-bit items.
pub const ITEMS_64: u32 = 4;

/// Bytes past the supervisor's PC that its instruction fetch may be reading. A `send` that reads
/// a memory element the fetch uses raises `TEXCPT_CONFLICT` on the hardware (osmarks/ipu-stack's
/// BRINGUP.md, run on a C600); ipu-stack keeps exchange data clear of the program and this
/// look-ahead (`ipu-target/src/memory.rs`) \[S\]. The simulator's conflict rule and the
/// compiler's placement both use it.
pub const FETCH_LOOKAHEAD_BYTES: u32 = 64;

/// Tiles of the ipu21 fabric.
pub const IPU21_TILES: u32 = 1472;
const ROWS: u32 = 23;
const ROW_TILES: u32 = 64;

impl Fabric {
    /// The `sctl` direction bit (1 or 2) that carries a word from tile `sender` to tile
    /// `receiver` (logical ids): the route's for the ipu21; [`DIRECTION_1`] on a uniform fabric.
    /// `None` for a tile outside the ipu21.
    pub fn direction(self, sender: u32, receiver: u32) -> Option<u32> {
        match self {
            Fabric::Uniform => Some(DIRECTION_1),
            Fabric::Ipu21 => Some(direction(physical(sender)?, physical(receiver)?)),
        }
    }

    /// Whether a word sent with control `sctl` from `sender` reaches `receiver`.
    pub fn reaches(self, sctl: u32, sender: u32, receiver: u32) -> bool {
        match self {
            Fabric::Uniform => sctl & (DIRECTION_1 | DIRECTION_2) != 0,
            Fabric::Ipu21 => self
                .direction(sender, receiver)
                .is_some_and(|d| sctl & d != 0),
        }
    }

    /// Cycles from a word on `sender`'s wires to its write on `receiver` (logical ids) on the
    /// ipu21 ([`route_latency`]); `None` on a uniform fabric, whose latency the machine file
    /// gives, and for a tile outside the ipu21.
    pub fn latency(self, sender: u32, receiver: u32) -> Option<u32> {
        match self {
            Fabric::Uniform => None,
            Fabric::Ipu21 => Some(route_latency(physical(sender)?, physical(receiver)?)),
        }
    }

    /// Cycles by which `receiver`'s timed mux selection (XPIC) leads the first word it takes
    /// ([`mux_lead`]); 0 on a uniform fabric, where a selection applies to the words arriving
    /// in its own cycle, and for a tile outside the ipu21.
    pub fn mux_lead(self, receiver: u32) -> u32 {
        match self {
            Fabric::Uniform => 0,
            Fabric::Ipu21 => physical(receiver).map_or(0, mux_lead),
        }
    }

    /// The XPIC value that selects tile `tile` (logical id) as the sender: its physical id on
    /// the ipu21, as the hardware's rows name it \[S\]; its own number on a uniform fabric.
    /// `None` for a tile outside the ipu21.
    pub fn xpic(self, tile: u32) -> Option<u32> {
        match self {
            Fabric::Uniform => Some(tile),
            Fabric::Ipu21 => physical(tile),
        }
    }

    /// The tile (logical id) an XPIC value selects: the inverse of [`Fabric::xpic`]; `None`
    /// for a value that names no tile of the ipu21.
    pub fn tile_of_xpic(self, value: u32) -> Option<u32> {
        match self {
            Fabric::Uniform => Some(value),
            Fabric::Ipu21 => logical(value),
        }
    }

    /// The tile whose lane a 64-bit send borrows, and the other member of a receiving pair:
    /// logical tiles 2k and 2k + 1, physical partners (p, p ^ 2) on the ipu21 \[S\]; the same
    /// numbering on a uniform fabric \[A\].
    pub fn partner(self, tile: u32) -> u32 {
        tile ^ 1
    }

    /// Cycles from a 64-bit item on `sender`'s wires to its write on `receiver` (logical ids)
    /// on the ipu21 ([`paired_latency`]); `None` on a uniform fabric and outside the ipu21.
    pub fn paired_latency(self, sender: u32, receiver: u32) -> Option<u32> {
        match self {
            Fabric::Uniform => None,
            Fabric::Ipu21 => Some(paired_latency(physical(sender)?, physical(receiver)?)),
        }
    }

    /// Cycles by which a pair's paired-stream selection (XPIC stream 1) leads the first item
    /// it takes ([`paired_mux_lead`]); 0 on a uniform fabric.
    pub fn paired_mux_lead(self, receiver: u32) -> u32 {
        match self {
            Fabric::Uniform => 0,
            Fabric::Ipu21 => physical(receiver).map_or(0, paired_mux_lead),
        }
    }

    /// Cycles by which a PIC format write leads the items it is for ([`FORMAT_LEAD`] on the
    /// ipu21; 0 on a uniform fabric, where it applies in its own cycle).
    pub fn format_lead(self) -> u32 {
        match self {
            Fabric::Uniform => 0,
            Fabric::Ipu21 => FORMAT_LEAD,
        }
    }

    /// The paired-stream XPIC value with which `receiver` selects `sender`'s 64-bit items: the
    /// sender's physical id XOR bit 1 of the receiver's (`sender ^ (receiver & 2)`, as
    /// ipu-stack's rows write it) \[S\]; the sender's own number on a uniform fabric.
    pub fn paired_xpic(self, sender: u32, receiver: u32) -> Option<u32> {
        match self {
            Fabric::Uniform => Some(sender),
            Fabric::Ipu21 => Some(physical(sender)? ^ (physical(receiver)? & 2)),
        }
    }

    /// The sender (logical id) a paired-stream XPIC value written by `receiver` selects: the
    /// inverse of [`Fabric::paired_xpic`].
    pub fn tile_of_paired_xpic(self, value: u32, receiver: u32) -> Option<u32> {
        match self {
            Fabric::Uniform => Some(value),
            Fabric::Ipu21 => logical(value ^ (physical(receiver)? & 2)),
        }
    }

    /// Whether `receiver` is the member of its pair that selects the pair's paired stream for
    /// `sender`'s items: the one with the smaller route time T (ipu-stack's
    /// `paired_receiver_is_early`; the other member only sets its format and pointer) \[S\].
    /// On a uniform fabric, the even member.
    pub fn paired_selector(self, sender: u32, receiver: u32) -> bool {
        match self {
            Fabric::Uniform => receiver.is_multiple_of(2),
            Fabric::Ipu21 => match (physical(sender), physical(receiver)) {
                (Some(s), Some(r)) => {
                    let (own, other) = (route_time(s, r), route_time(s, r ^ 2));
                    own < other || (own == other && r & 2 == 0)
                }
                _ => false,
            },
        }
    }

    /// The direction bits of a send from `sender` that every tile of `receivers` hears.
    pub fn sctl<I: IntoIterator<Item = u32>>(self, sender: u32, receivers: I) -> u32 {
        receivers
            .into_iter()
            .filter_map(|r| self.direction(sender, r))
            .fold(0, |bits, d| bits | d)
    }
}

/// The physical id of logical tile `tile` on the ipu21 (`None` past its 1472 tiles).
pub fn physical(tile: u32) -> Option<u32> {
    if tile >= IPU21_TILES {
        return None;
    }
    let (pair, second) = (tile / 2, tile % 2);
    let (block, i) = (pair / ROWS, pair % ROWS);
    let row = if block.is_multiple_of(2) {
        i
    } else {
        ROWS - 1 - i
    };
    let column = (block / 2) * 4 + (block & 1) + 2 * second;
    Some(row * ROW_TILES + column)
}

/// The logical id of physical tile `p` on the ipu21: the inverse of [`physical`] (`None` for a
/// value that is not a physical tile id).
pub fn logical(p: u32) -> Option<u32> {
    if p >= IPU21_TILES {
        return None;
    }
    let (row, column) = (p / ROW_TILES, p % ROW_TILES);
    let second = (column >> 1) & 1;
    let block = (column >> 2) * 2 + (column & 1);
    let i = if block.is_multiple_of(2) {
        row
    } else {
        ROWS - 1 - row
    };
    Some((block * ROWS + i) * 2 + second)
}

fn row(p: u32) -> i64 {
    i64::from(p >> 6)
}

/// Column group (bits [5:2]).
fn group(p: u32) -> i64 {
    i64::from((p >> 2) & 15)
}

/// The half of the row a group lies in.
fn side(p: u32) -> i64 {
    group(p) >> 3
}

/// A group folded about the row's middle.
fn folded(g: i64) -> i64 {
    if g <= 7 {
        g
    } else {
        15 - g
    }
}

/// The displacement D between physical tiles `s` and `d` (appendix A).
fn displacement(s: u32, d: u32) -> i64 {
    let lane = i64::from(d & 3);
    let low = i64::from(d & 1);
    let k = if lane >= 2 {
        if side(d) == low {
            2
        } else {
            4
        }
    } else if side(d) == lane {
        1
    } else {
        5
    };
    6 * (folded(group(d)) - folded(group(s)) - (side(s) ^ i64::from(s & 1))) + k
}

/// The `sctl` direction (1 or 2) from physical tile `s` to physical tile `d`: 2 when D < 1.
pub fn direction(s: u32, d: u32) -> u32 {
    if displacement(s, d) < 1 {
        DIRECTION_2
    } else {
        DIRECTION_1
    }
}

/// The route function T(s, d) of physical tiles: the receiver's mux must select the sender at
/// the sender's first-word event + T + 1 (appendix A).
pub fn route_time(s: u32, d: u32) -> i64 {
    let s3 = i64::from((s >> 2) & 7);
    let c = (8 * side(s) + i64::from((s >> 3) & 3)) - group(d) + ((s3 >> 1) ^ 3);
    let u = if (s >> 5) & 1 == (d >> 5) & 1 {
        s3 + 1
    } else {
        16 - s3
    };
    c + 4 * folded(group(s)) + u - 4 * folded(group(d))
        + 2 * (row(s) - row(d))
        + displacement(s, d).abs()
        - 34
}

/// Cycles by which a receiver's XPIC selection leads the words it takes, for physical tile `d`:
/// the SDK's and ipu-stack's rows set the write pointer at XPIC + 52 + 2·row(d), and the words
/// land from that event on (hardware-ipu-stack.md §1.3) \[S\].
pub fn mux_lead(d: u32) -> u32 {
    52 + 2 * (d >> 6)
}

/// Cycles from the sender's word event to the word's write on the receiver, for physical tiles:
/// the mux selects at T(s, d) + 1 ([`route_time`]) and the words land [`mux_lead`] later, so
/// T + 53 + 2·row(d) (19 to 165, mean 65, over every pair) \[S\].
pub fn route_latency(s: u32, d: u32) -> u32 {
    let latency = route_time(s, d) + 1 + i64::from(mux_lead(d));
    // T ≥ −78 for every pair of the 1472 tiles (the test covers them all), so this is ≥ 19.
    u32::try_from(latency.max(1)).unwrap_or(1)
}

/// Cycles by which a PIC format write leads the items it is for: ipu-stack's paired rows turn the
/// format on 2 events before the pointer event their first item lands at, and off `count`
/// events after turning it on, so a format write applies to the items arriving 2 cycles later
/// (hardware-ipu-stack.md §1.4) \[S\].
pub const FORMAT_LEAD: u32 = 2;

/// The route time of a 64-bit item to a receiving pair, for physical tiles: the later of the two
/// members', `max(T(s, d), T(s, d ^ 2))` (ipu-stack's `paired_time_to_mux`) \[S\].
pub fn paired_route_time(s: u32, d: u32) -> i64 {
    route_time(s, d).max(route_time(s, d ^ 2))
}

/// Cycles by which a pair's paired-stream selection leads the items it takes, for physical tile
/// `d`: ipu-stack's paired rows set the format at the selection + 51 + 2·row(d) and the pointer
/// 2 events later, where the items land: 53 + 2·row(d) (one more than [`mux_lead`]) \[S\].
pub fn paired_mux_lead(d: u32) -> u32 {
    53 + 2 * (d >> 6)
}

/// Cycles from the sender's item event to the item's write on receiver `d` of a pair, for
/// physical tiles: the selection at [`paired_route_time`] + 1 (the relation of the 32-bit rows:
/// ipu-stack's paired rows select at the paired route time where its 32-bit rows select at T)
/// and the items [`paired_mux_lead`] later \[S\].
pub fn paired_latency(s: u32, d: u32) -> u32 {
    let latency = paired_route_time(s, d) + 1 + i64::from(paired_mux_lead(d));
    u32::try_from(latency.max(1)).unwrap_or(1)
}

/// The longest [`route_latency`] over every pair of the ipu21's tiles.
pub const IPU21_MAX_LATENCY: u32 = 165;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_numbering_is_a_bijection_and_pairs_are_partners() {
        let mut seen = vec![false; IPU21_TILES as usize];
        for t in 0..IPU21_TILES {
            let p = physical(t).unwrap();
            assert!(p < IPU21_TILES && !seen[p as usize], "{t} -> {p}");
            seen[p as usize] = true;
            if t % 2 == 1 {
                assert_eq!(p, physical(t - 1).unwrap() ^ 2, "pair {t}");
            }
        }
        assert_eq!(physical(IPU21_TILES), None);
        for t in 0..IPU21_TILES {
            assert_eq!(logical(physical(t).unwrap()), Some(t));
            assert_eq!(
                Fabric::Ipu21.tile_of_xpic(Fabric::Ipu21.xpic(t).unwrap()),
                Some(t)
            );
        }
        assert_eq!(logical(IPU21_TILES), None);
        assert_eq!(Fabric::Uniform.xpic(5), Some(5));
        // Blocks of 23 pairs fill a column position down the rows, then the next one up.
        assert_eq!(physical(0), Some(0));
        assert_eq!(physical(2), Some(64));
        assert_eq!(physical(44), Some(22 * 64));
        assert_eq!(physical(46), Some(22 * 64 + 1));
        assert_eq!(physical(92), Some(4));
    }

    /// The SDK's point-to-point vectors (logical sender → receiver, sender delay 111 − T).
    #[test]
    fn the_route_function_reproduces_the_sdk_vectors() {
        for (s, d, delay) in [
            (0, 1286, 134),
            (736, 100, 62),
            (1286, 1471, 125),
            (32, 0, 108),
        ] {
            let t = route_time(physical(s).unwrap(), physical(d).unwrap());
            assert_eq!(111 - t, delay, "{s} -> {d}");
        }
    }

    /// hardware-ipu-stack.md §1.3: "send to pointer event" is 19…165 events, mean 65, over all
    /// 1472 × 1471 pairs; T itself −78…+112.
    #[test]
    fn send_to_write_spans_what_the_hardware_rows_obey() {
        let (mut lo, mut hi, mut sum, mut n) = (u32::MAX, 0, 0u64, 0u64);
        let (mut tlo, mut thi) = (i64::MAX, i64::MIN);
        for s in 0..IPU21_TILES {
            for d in (0..IPU21_TILES).filter(|&d| d != s) {
                let l = route_latency(s, d);
                let t = route_time(s, d);
                assert_eq!(i64::from(l), t + 53 + 2 * row(d));
                (lo, hi, sum, n) = (lo.min(l), hi.max(l), sum + u64::from(l), n + 1);
                (tlo, thi) = (tlo.min(t), thi.max(t));
            }
        }
        assert_eq!((lo, hi, tlo, thi), (19, IPU21_MAX_LATENCY, -78, 112));
        assert_eq!((sum as f64 / n as f64).round(), 65.0);
        // Logical ids go through the snake; a uniform fabric leaves latency to the machine.
        let l = Fabric::Ipu21.latency(0, 1286).unwrap();
        assert_eq!(l, route_latency(0, physical(1286).unwrap()));
        assert_eq!(Fabric::Uniform.latency(0, 1), None);
        assert_eq!(Fabric::Ipu21.mux_lead(2), 52 + 2);
        assert_eq!(Fabric::Uniform.mux_lead(2), 0);
    }

    #[test]
    fn a_send_reaches_the_receivers_its_control_names() {
        let f = Fabric::Ipu21;
        let s = (0..IPU21_TILES)
            .find(|&s| f.direction(s, 1471) != f.direction(s, s ^ 1))
            .unwrap();
        let (near, far) = (s ^ 1, 1471);
        let bits = f.sctl(s, [near, far]);
        assert!(f.reaches(bits, s, near) && f.reaches(bits, s, far));
        let d = f.direction(s, far).unwrap();
        assert!(f.reaches(d, s, far));
        let other = (DIRECTION_1 | DIRECTION_2) ^ d;
        assert!(!f.reaches(other, s, far), "the other direction misses it");
        assert!(!f.reaches(0, s, near), "sctl 0 puts nothing on the fabric");
        // From the row's edge every receiver lies one way; from some tiles, both ways.
        let dirs = |s: u32| -> std::collections::BTreeSet<u32> {
            (0..IPU21_TILES)
                .filter(|&r| r != s)
                .filter_map(|r| f.direction(s, r))
                .collect()
        };
        assert_eq!(dirs(0), [DIRECTION_1].into());
        assert!((0..IPU21_TILES).step_by(7).any(|s| dirs(s).len() == 2));
        assert!(Fabric::Uniform.reaches(1, 3, 7) && !Fabric::Uniform.reaches(0, 3, 7));
    }

    /// The paired facts the simulator and compiler build on, over every sender and receiving
    /// pair of the ipu21: both members of a pair lie in one direction from any sender (so one
    /// direction bit reaches both, as ipu-stack's pair rows send), an item lands on both at
    /// the same cycle, one cycle after a 32-bit word to the later member would, exactly one
    /// member selects, and its XPIC value round-trips.
    #[test]
    fn paired_items_reach_both_members_together() {
        let f = Fabric::Ipu21;
        for sender in 0..IPU21_TILES {
            for pair in (0..IPU21_TILES).step_by(2) {
                if pair == sender & !1 {
                    continue;
                }
                let (a, b) = (pair, pair + 1);
                assert_eq!(
                    f.direction(sender, a),
                    f.direction(sender, b),
                    "{sender} -> {pair}"
                );
                let la = f.paired_latency(sender, a).unwrap();
                assert_eq!(Some(la), f.paired_latency(sender, b));
                let later = f
                    .latency(sender, a)
                    .unwrap()
                    .max(f.latency(sender, b).unwrap());
                assert_eq!(la, later + 1, "{sender} -> {pair}");
                assert!(f.paired_selector(sender, a) != f.paired_selector(sender, b));
                for m in [a, b] {
                    let v = f.paired_xpic(sender, m).unwrap();
                    assert_eq!(f.tile_of_paired_xpic(v, m), Some(sender));
                }
            }
        }
    }
}
