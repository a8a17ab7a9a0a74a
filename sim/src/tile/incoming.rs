//! A tile's incoming exchange port: the `$INCOMING_*` CSRs, the incoming pointer, and the delivery
//! of words from other tiles at their arrival cycles. The behaviour (a project assumption) is
//! written down in `crate::chip::exchange`; this module implements it for one receiver.
//!
//! The port reads other tiles' sent words through an [`ExchangeView`]: per sender, the words
//! sent so far in the current phase, and how far each sender has been simulated. The tile may run
//! to cycle `t` only while every word that could reach it before `t` is known: its *horizon* is
//! the smallest `progress(S) + latency(S, me)` over the sources it listens to. Delivery, skip and
//! horizon computations never allocate; the per-phase records (`accepted`, `switches`) reuse
//! their capacity from phase to phase.

use std::collections::VecDeque;
use tessera_isa::fabric::FETCH_LOOKAHEAD_BYTES;

use super::watch::WriteWatch;
use super::OutgoingWord;
use crate::error::SimError;
use crate::machine::ExchangeDescription;
use crate::memory::TileMemory;
use tessera_isa::csr::index;
use tessera_isa::fabric::Fabric;
use tessera_isa::semantics::TrapKind;

/// What a tile sees of the other tiles' outgoing words during one round.
#[derive(Clone, Copy, Debug)]
pub struct ExchangeView<'a> {
    /// Per sender tile: its words sent in the current phase, in send order.
    pub sent: &'a [Vec<OutgoingWord>],
    /// Per tile: every word it sends before this cycle is in `sent` (`u64::MAX`: it sends no
    /// more words in this phase).
    pub progress: &'a [u64],
    /// Per tile: its timed selections of its pair's paired stream this phase, in order, for
    /// its partner (empty where none).
    pub pair_selections: &'a [Vec<PairSelection>],
}

impl ExchangeView<'static> {
    /// No other tiles: nothing arrives and nothing limits the horizon (a one-tile run).
    pub const NONE: ExchangeView<'static> = ExchangeView {
        sent: &[],
        progress: &[],
        pair_selections: &[],
    };
}

impl<'a> ExchangeView<'a> {
    fn words(&self, tile: u32) -> &'a [OutgoingWord] {
        self.sent
            .get(tile as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    fn pair_selections(&self, tile: u32) -> &'a [PairSelection] {
        self.pair_selections
            .get(tile as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    fn progress(&self, tile: u32) -> u64 {
        self.progress
            .get(tile as usize)
            .copied()
            .unwrap_or(u64::MAX)
    }
}

/// A timed selection of a pair's paired stream (XPIC stream 1) that one member wrote, as its
/// partner sees it: on the hardware the pair shares the stream, and ipu-stack's rows have only
/// one member select it (`tessera_isa::fabric::Fabric::paired_selector`) \[S\].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairSelection {
    /// Items arriving at the partner from this cycle on are for it.
    pub effective: u64,
    /// Sender tile + 1; 0: none.
    pub value: u32,
    /// Cycles from the sender's item event to its write on the partner.
    pub latency: u64,
}

/// Consecutive words of one sender's phase log that this tile accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcceptedRun {
    pub sender: u32,
    /// Index of the first word in the sender's phase log.
    pub first: u32,
    pub count: u32,
}

/// A mux that switched from one sender to another while listening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MuxSwitch {
    pub cycle: u64,
    pub from: u32,
    pub to: u32,
    /// The pair's paired stream (else `$INCOMING_MUX`).
    pub pair: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct Source {
    /// CSR value: sender tile + 1, 0 = not listening.
    value: u32,
    /// Words arriving before this cycle are not for this source setting.
    from: u64,
    /// Index in the sender's phase log of the next word not yet delivered or skipped.
    cursor: usize,
    latency: u64,
}

impl Source {
    fn sender(&self) -> Option<u32> {
        self.value.checked_sub(1)
    }

    /// Arrival cycle of the next word from this source, skipping words that arrive before `from`.
    #[inline]
    fn next(&mut self, view: &ExchangeView) -> u64 {
        let Some(sender) = self.sender() else {
            return u64::MAX;
        };
        let words = view.words(sender);
        let rest = words.get(self.cursor..).unwrap_or(&[]);
        let (latency, from) = (self.latency, self.from);
        if rest.first().is_some_and(|w| w.cycle + latency < from) {
            self.cursor += rest.partition_point(|w| w.cycle + latency < from);
        }
        words
            .get(self.cursor)
            .map_or(u64::MAX, |w| w.cycle + latency)
    }

    /// The word arriving at `cycle` (with its index), if the next one does.
    #[inline]
    fn at(&self, view: &ExchangeView, cycle: u64) -> Option<(u32, usize, OutgoingWord)> {
        let sender = self.sender()?;
        let word = *view.words(sender).get(self.cursor)?;
        (word.cycle + self.latency == cycle).then_some((sender, self.cursor, word))
    }

    fn horizon(&self, view: &ExchangeView) -> u64 {
        match self.sender() {
            Some(sender) => view.progress(sender).saturating_add(self.latency),
            None => u64::MAX,
        }
    }
}

/// A mux selection written ahead of the words it is for (a timed XPIC control on a fabric whose
/// selections lead, `crate::machine::ExchangeDescription::mux_lead_cycles`): it replaces the
/// source at `effective`.
#[derive(Clone, Copy, Debug)]
struct PendingSelection {
    effective: u64,
    pair: bool,
    value: u32,
    latency: u64,
}

/// Where delivered words go.
struct Sink<'a> {
    memory: &'a mut TileMemory,
    watch: &'a mut WriteWatch,
    me: u32,
    /// The supervisor's PC, whose memory element (and that of PC + 64) a received word must
    /// not be written to; `None` once it has halted.
    fetch: Option<u32>,
}

/// The receive side of one tile's exchange interface.
#[derive(Clone, Debug)]
pub struct IncomingPort {
    mux: Source,
    /// The pair's paired stream: the sender whose 64-bit items the tile takes while its format
    /// is paired (selected by this tile or by its partner).
    pair: Source,
    /// Selections written but not yet in effect, in order of `effective`.
    pending: VecDeque<PendingSelection>,
    /// The format in effect: 0, 32-bit words on the mux; 1 or 2, 64-bit items on the paired
    /// stream (the route's direction, as the hardware's rows write it).
    format: u32,
    /// Format writes not yet in effect, `(effective, value)` in order.
    formats: VecDeque<(u64, u32)>,
    /// The next of the partner's published selections not yet applied.
    partner_cursor: usize,
    /// This round: the paired-stream selections this tile wrote ahead, for its partner.
    pub pair_outbox: Vec<PairSelection>,
    delta: u32,
    base: u32,
    pointer: u32,
    /// Cached: the next arrival cycle (`u64::MAX`: none known).
    next_arrival: u64,
    /// Cached: arrivals before this cycle are all known.
    horizon: u64,
    /// This phase: runs of accepted words.
    pub accepted: Vec<AcceptedRun>,
    /// This phase: mux switches between two senders.
    pub switches: Vec<MuxSwitch>,
    /// This phase: bytes written by deliveries.
    pub bytes_received: u64,
    /// This phase: the last cycle a word arrived.
    pub last_arrival: Option<u64>,
    /// The fabric's geometry: which words reach this tile (`tessera_isa::fabric`).
    fabric: Fabric,
}

impl Default for IncomingPort {
    fn default() -> IncomingPort {
        IncomingPort {
            mux: Source::default(),
            pair: Source::default(),
            pending: VecDeque::new(),
            format: 0,
            formats: VecDeque::new(),
            partner_cursor: 0,
            pair_outbox: Vec::new(),
            delta: 0,
            base: 0,
            pointer: 0,
            next_arrival: u64::MAX,
            horizon: u64::MAX,
            accepted: Vec::new(),
            switches: Vec::new(),
            bytes_received: 0,
            last_arrival: None,
            fabric: Fabric::Uniform,
        }
    }
}

impl IncomingPort {
    /// A port on a fabric of geometry `fabric`.
    pub fn on(fabric: Fabric) -> IncomingPort {
        IncomingPort {
            fabric,
            ..IncomingPort::default()
        }
    }

    /// The next known arrival cycle.
    #[inline]
    pub fn next_arrival(&self) -> u64 {
        self.next_arrival
    }

    /// Arrivals before this cycle are known (and issues up to it are safe).
    #[inline]
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// Whether the port listens to anyone, or will once a selection written ahead takes effect.
    pub fn listening(&self) -> bool {
        self.mux.value != 0
            || (self.format != 0 && self.pair.value != 0)
            || self.pending.iter().any(|p| p.value != 0)
            || self.formats.iter().any(|f| f.1 != 0)
    }

    /// Starts a new phase: the chip has cleared every sender's log.
    pub fn start_phase(&mut self) {
        self.mux.cursor = 0;
        self.pair.cursor = 0;
        self.partner_cursor = 0;
        self.pair_outbox.clear();
        self.accepted.clear();
        self.switches.clear();
        self.bytes_received = 0;
        self.last_arrival = None;
        self.next_arrival = u64::MAX;
        self.horizon = u64::MAX;
    }

    /// Recomputes the horizon and the next arrival against `view` (its logs may have grown).
    /// `me` is this tile.
    #[inline]
    pub fn refresh(&mut self, view: &ExchangeView, me: u32) {
        let mut horizon = self.mux.horizon(view);
        let mut next = self.mux.next(view);
        if self.format != 0 {
            horizon = horizon.min(self.pair.horizon(view));
            next = next.min(self.pair.next(view));
        }
        if self.format != 0 || self.formats.iter().any(|f| f.1 != 0) {
            // The partner's selections of the shared stream: those it writes from its progress
            // on take effect a lead later.
            let partner = self.fabric.partner(me);
            let lead = u64::from(self.fabric.paired_mux_lead(partner));
            if lead > 0 {
                horizon = horizon.min(view.progress(partner).saturating_add(lead));
            }
            if let Some(p) = view.pair_selections(partner).get(self.partner_cursor) {
                next = next.min(p.effective);
                if let Some(sender) = p.value.checked_sub(1) {
                    horizon = horizon.min(view.progress(sender).saturating_add(p.latency));
                }
            }
        }
        if let Some(&(effective, _)) = self.formats.front() {
            next = next.min(effective);
        }
        // A selection written ahead: its sender's words must be known by the time it takes
        // effect, and its cycle is one the port must visit to apply it.
        for pending in &self.pending {
            if let Some(sender) = pending.value.checked_sub(1) {
                horizon = horizon.min(view.progress(sender).saturating_add(pending.latency));
            }
        }
        if let Some(first) = self.pending.front() {
            next = next.min(first.effective);
        }
        self.horizon = horizon;
        self.next_arrival = next;
    }

    /// Puts a mux selection in effect from `cycle` on.
    fn select(&mut self, pair: bool, value: u32, cycle: u64, latency: u64) {
        let source = if pair { &mut self.pair } else { &mut self.mux };
        if source.value == value {
            return;
        }
        let listening = !pair || self.format != 0;
        if let (Some(from), Some(to), true) = (source.sender(), value.checked_sub(1), listening) {
            self.switches.push(MuxSwitch {
                cycle,
                from,
                to,
                pair,
            });
        }
        *source = Source {
            value,
            from: cycle,
            cursor: 0,
            latency,
        };
    }

    /// Puts in effect the selections written ahead whose cycle has come (this tile's and, for
    /// the paired stream, its partner's, in order of effect), then the format writes.
    fn apply_pending(&mut self, cycle: u64, view: &ExchangeView, me: u32) {
        let theirs = view.pair_selections(self.fabric.partner(me));
        loop {
            let own = self
                .pending
                .front()
                .filter(|p| p.effective <= cycle)
                .copied();
            let other = theirs
                .get(self.partner_cursor)
                .filter(|p| p.effective <= cycle)
                .copied();
            match (own, other) {
                (Some(o), Some(t)) if t.effective < o.effective => {
                    self.partner_cursor += 1;
                    self.select(true, t.value, t.effective, t.latency);
                }
                (Some(o), _) => {
                    self.pending.pop_front();
                    self.select(o.pair, o.value, o.effective, o.latency);
                }
                (None, Some(t)) => {
                    self.partner_cursor += 1;
                    self.select(true, t.value, t.effective, t.latency);
                }
                (None, None) => break,
            }
        }
        while let Some(&(effective, value)) = self.formats.front().filter(|f| f.0 <= cycle) {
            self.formats.pop_front();
            if value != 0 && self.format == 0 {
                // Items that arrived before the format turned on are not taken.
                self.pair.from = self.pair.from.max(effective);
            }
            self.format = value;
        }
    }

    /// A write to an exchange CSR issued at `cycle` by tile `me`. It takes effect for words
    /// arriving at `cycle` and later; a mux selection `lead` cycles ahead (a timed XPIC control
    /// on the ipu21, `crate::machine::ExchangeDescription::mux_lead_cycles`) for words
    /// arriving at `cycle + lead` and later.
    #[expect(
        clippy::too_many_arguments,
        reason = "the write, its tile and the machine it runs on"
    )]
    pub fn write_csr(
        &mut self,
        csr: u8,
        value: u32,
        cycle: u64,
        lead: u64,
        me: u32,
        exchange: &ExchangeDescription,
        tiles: u32,
    ) -> Result<(), TrapKind> {
        match csr {
            index::INCOMING_MUX | index::INCOMING_MUXPAIR => {
                if value > tiles {
                    return Err(TrapKind::InvalidOperation { what: "an incoming mux names a tile the chip does not have (value = sender tile + 1)" });
                }
                let pair = csr == index::INCOMING_MUXPAIR;
                let latency = |receiver: u32| match (value.checked_sub(1), pair) {
                    (None, _) => 0,
                    (Some(sender), false) => exchange.latency_cycles(sender, receiver),
                    (Some(sender), true) => exchange.paired_latency_cycles(sender, receiver),
                };
                let effective = cycle + lead;
                if pair && lead > 0 {
                    // Written ahead on the shared stream: the partner takes it too.
                    let partner = self.fabric.partner(me);
                    if partner < tiles {
                        self.pair_outbox.push(PairSelection {
                            effective,
                            value,
                            latency: latency(partner),
                        });
                    }
                }
                let latency = latency(me);
                if lead == 0 && self.pending.is_empty() {
                    self.select(pair, value, cycle, latency);
                } else {
                    // Kept in order of effect (a selection written with no lead after one
                    // written ahead may take effect first).
                    let at = self.pending.partition_point(|p| p.effective <= effective);
                    self.pending.insert(
                        at,
                        PendingSelection {
                            effective,
                            pair,
                            value,
                            latency,
                        },
                    );
                }
            }
            index::INCOMING_FORMAT => {
                if value > 2 {
                    return Err(TrapKind::Unmodelled { what: format!("$INCOMING_FORMAT = {value} (modelled: 0 = 32-bit words; 1, 2 = 64-bit items, the route's direction)") });
                }
                let effective = cycle + lead;
                let at = self.formats.partition_point(|f| f.0 <= effective);
                self.formats.insert(at, (effective, value));
            }
            index::INCOMING_DELTA => self.delta = value,
            index::INCOMING_BASE => self.base = value,
            index::INCOMING_SINIT => self.pointer = value,
            // Every exchange phase on the hardware writes these two (hardware-ipu-stack.md §1.2):
            // `$INCOMING_DCOUNT` = 1 before an internal phase (its count only matters to
            // `sync 0`, the host receive, not modelled), `$OUTGOING_BASE` = 0.
            index::INCOMING_DCOUNT => {}
            index::OUTGOING_BASE if value == 0 => {}
            index::OUTGOING_BASE => {
                return Err(TrapKind::Unmodelled {
                    what: format!(
                        "$OUTGOING_BASE = {value:#x} (modelled: 0, send addresses absolute)"
                    ),
                })
            }
            other => {
                let name = tessera_isa::csr::csr_at(tessera_isa::csr::CsrSpace::Lower, other, true)
                    .map_or("an exchange CSR", |c| c.name);
                return Err(TrapKind::Unmodelled { what: format!("writing {name} (modelled exchange CSRs: $INCOMING_MUX, $INCOMING_MUXPAIR, $INCOMING_FORMAT, $INCOMING_DELTA, $INCOMING_BASE, $INCOMING_SINIT, $INCOMING_DCOUNT, $OUTGOING_BASE = 0)") });
            }
        }
        Ok(())
    }

    fn write_word(
        &mut self,
        sink: &mut Sink,
        sender: u32,
        cycle: u64,
        offset: u32,
        word: u32,
    ) -> Result<(), SimError> {
        let address = self.base.wrapping_add(self.pointer).wrapping_add(offset);
        if let Some(fetch) = sink.fetch {
            let layout = sink.memory.layout();
            let fetched = [
                layout.element_of(fetch),
                layout.element_of(fetch.saturating_add(FETCH_LOOKAHEAD_BYTES)),
            ];
            if let Some(element) = layout
                .element_of(address)
                .filter(|e| fetched.contains(&Some(*e)))
            {
                return Err(SimError::ExchangeFetchClash {
                    receiver: sink.me,
                    sender,
                    cycle,
                    address,
                    element: element.index(),
                    fetch,
                });
            }
        }
        sink.memory
            .write(address, &word.to_le_bytes())
            .map_err(|fault| SimError::ExchangeReceive {
                receiver: sink.me,
                sender,
                cycle,
                address,
                fault,
            })?;
        sink.watch.note(address, 4, cycle);
        self.bytes_received += 4;
        Ok(())
    }

    fn record(&mut self, sender: u32, index: usize) {
        let index = index as u32;
        if let Some(last) = self.accepted.last_mut() {
            if last.sender == sender && last.first + last.count == index {
                last.count += 1;
                return;
            }
        }
        self.accepted.push(AcceptedRun {
            sender,
            first: index,
            count: 1,
        });
    }

    /// Delivers the words arriving at `cycle` (the next arrival) into `memory`; `fetch` is the
    /// supervisor's PC (`None` once it has halted): a word written into its memory element is the
    /// hardware's receive error `CLASH_IFETCH` (E-SIM-017).
    pub fn deliver(
        &mut self,
        cycle: u64,
        view: &ExchangeView,
        (memory, watch): (&mut TileMemory, &mut WriteWatch),
        me: u32,
        fetch: Option<u32>,
    ) -> Result<(), SimError> {
        self.apply_pending(cycle, view, me);
        let sink = &mut Sink {
            memory,
            watch,
            me,
            fetch,
        };
        let received = self.bytes_received;
        // A word whose send control does not name the direction towards this tile arrives with
        // nothing for it: the mux moves past it and nothing is written.
        let fabric = self.fabric;
        let reaching = |source: &mut Source| {
            let arrived = source.at(view, cycle);
            match arrived {
                Some((sender, _, word)) if !fabric.reaches(word.mode, sender, me) => {
                    source.cursor += 1;
                    None
                }
                other => other,
            }
        };
        let paired_fault = |sender: u32, detail: String| SimError::ExchangePaired {
            receiver: me,
            sender,
            cycle,
            detail,
        };
        if let Some((sender, index, word)) = reaching(&mut self.mux) {
            if word.is_item64() {
                return Err(paired_fault(
                    sender,
                    "a 64-bit item arrives on the 32-bit mux (64-bit items are taken on the pair's paired stream, with the format set)".into(),
                ));
            }
            if self.format != 0 {
                return Err(paired_fault(
                    sender,
                    format!(
                        "a 32-bit word arrives on the mux while the format is {} (64-bit items)",
                        self.format
                    ),
                ));
            }
            self.write_word(sink, sender, cycle, 0, word.word)?;
            self.pointer = self.pointer.wrapping_add(4).wrapping_add(self.delta);
            self.mux.cursor += 1;
            self.record(sender, index);
        }
        if self.format != 0 {
            if let Some((sender, index, word)) = reaching(&mut self.pair) {
                // The paired stream takes only 64-bit items; a 32-bit word of its sender is for
                // some other tile's mux.
                self.pair.cursor += 1;
                if word.is_item64() {
                    if let (Fabric::Ipu21, Some(direction)) = (fabric, fabric.direction(sender, me))
                    {
                        if direction != self.format {
                            return Err(paired_fault(
                                sender,
                                format!("the format is {} but the item comes in direction {direction} (the hardware's rows set the format to the route's direction)", self.format),
                            ));
                        }
                    }
                    self.write_word(sink, sender, cycle, 0, word.word)?;
                    self.write_word(sink, sender, cycle, 4, word.high)?;
                    self.pointer = self.pointer.wrapping_add(8).wrapping_add(self.delta);
                    self.record(sender, index);
                }
            }
        }
        if self.bytes_received != received {
            self.last_arrival = Some(cycle);
        }
        self.refresh(view, me);
        Ok(())
    }
}
