//! Placeholder bench (filled in by its issue).
fn main() {}
