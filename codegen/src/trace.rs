//! [`Trace`]: where a compile's diagnostic lines go — stage timings, the beam after each op, how
//! one op's strategies were priced. Off by default; a front end turns parts on and gives the
//! sink (the library itself prints nothing and reads no environment).

use std::fmt;
use std::sync::Arc;

/// Where trace lines go.
type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// What to trace and where the lines go.
#[derive(Clone, Default)]
pub struct Trace {
    sink: Option<Sink>,
    /// Stage timings and per-tile constants of each finalist, the exchange phases' lengths.
    pub timing: bool,
    /// The best states of the beam after each op.
    pub beam: bool,
    /// Every strategy of the op with this label, with its priced parts.
    pub op: Option<String>,
}

impl Trace {
    /// Tracing nothing until parts are turned on; lines go to `sink`.
    pub fn to(sink: impl Fn(&str) + Send + Sync + 'static) -> Trace {
        Trace {
            sink: Some(Arc::new(sink)),
            ..Trace::default()
        }
    }

    /// Passes one line to the sink (nothing without one).
    pub fn line(&self, line: &str) {
        if let Some(sink) = &self.sink {
            sink(line);
        }
    }

    /// Whether lines about the op labelled `label` are wanted.
    pub fn wants_op(&self, label: &str) -> bool {
        self.op.as_deref() == Some(label)
    }
}

impl fmt::Debug for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trace")
            .field("sink", &self.sink.is_some())
            .field("timing", &self.timing)
            .field("beam", &self.beam)
            .field("op", &self.op)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn lines_reach_the_sink_and_nothing_is_traced_by_default() {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let s = seen.clone();
        let mut trace = Trace::to(move |l| s.lock().unwrap().push(l.to_string()));
        assert!(!trace.timing && !trace.beam && !trace.wants_op("fc1"));
        trace.op = Some("fc1".into());
        assert!(trace.wants_op("fc1") && !trace.wants_op("fc2"));
        trace.line("one");
        Trace::default().line("dropped");
        assert_eq!(*seen.lock().unwrap(), vec!["one".to_string()]);
    }
}
