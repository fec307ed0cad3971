//! [`Tally`]: the passed, failed and skipped counts every part of `cargo xtask test` (and the
//! package check) reports, in a module of its own so that the modules adding them up do not
//! import each other.

/// Passed, failed and skipped counts.
#[derive(Default, Clone, Copy)]
pub struct Tally {
    /// Tests (or checks) that passed.
    pub passed: u32,
    /// Tests that failed, plus one per problem the log shows beyond them.
    pub failed: u32,
    /// Tests skipped (Rust tests marked ignored count here too).
    pub skipped: u32,
}

impl Tally {
    /// Adds another tally's counts.
    pub fn add(&mut self, o: Tally) {
        self.passed += o.passed;
        self.failed += o.failed;
        self.skipped += o.skipped;
    }

    /// "N passed, N failed" (", N skipped" when some were).
    pub fn line(&self) -> String {
        let mut s = format!("{} passed, {} failed", self.passed, self.failed);
        if self.skipped > 0 {
            s.push_str(&format!(", {} skipped", self.skipped));
        }
        s
    }

    /// One check that passed or failed.
    pub fn one(ok: bool) -> Tally {
        Tally {
            passed: ok as u32,
            failed: !ok as u32,
            skipped: 0,
        }
    }
}
