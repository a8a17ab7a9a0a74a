//! The project's one seeded generator (SplitMix64): the same seed gives the same numbers on
//! every host, with only integer arithmetic and exact float conversions.
//!
//! Why it lives here: the kernels' case generators and the models' synthetic weights and
//! inputs both need it, and `tessera-isa` is the one crate both already depend on (`models`
//! may not know `kernels`). It is not replaced by a crate such as `rand_xoshiro` (whose
//! `SplitMix64` has the same `next_u64`): the helpers below would still need one home, and the
//! seeded numbers are pinned by tests and README figures, so they must stay exactly these.

/// SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// A generator for the named stream of `seed`: streams of different names are
    /// independent, and a stream does not depend on which other streams were drawn.
    pub fn for_name(seed: u64, name: &str) -> Rng {
        // FNV-1a of the name, mixed with the seed.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut r = Rng::new(seed ^ h.rotate_left(17));
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The high 32 bits of [`Rng::next_u64`].
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[lo, hi]` (inclusive; modulo bias is accepted).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Roughly normal (Irwin–Hall: the sum of 12 uniforms, so |x − mean| ≤ 6·std), with the
    /// given mean and standard deviation.
    pub fn normal(&mut self, mean: f64, std: f64) -> f64 {
        let sum: f64 = (0..12).map(|_| self.unit()).sum();
        mean + (sum - 6.0) * std
    }

    /// One of `items`, uniformly (modulo bias is accepted); `items` must not be empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next_u64() % items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_roughly_normal() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(
            Rng::for_name(1, "a").next_u64(),
            Rng::for_name(1, "b").next_u64()
        );
        assert_ne!(
            Rng::for_name(1, "a").next_u64(),
            Rng::for_name(2, "a").next_u64()
        );
        let mut r = Rng::new(3);
        let xs: Vec<f64> = (0..20000).map(|_| r.normal(1.0, 0.5)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!((mean - 1.0).abs() < 0.02, "{mean}");
        assert!((var.sqrt() - 0.5).abs() < 0.02, "{var}");
    }

    /// The first numbers of two seeds, pinned: every seeded case, weight and figure in the
    /// project follows from these. `Rng::new(0)` starts one step into the reference SplitMix64
    /// seeded with 0, whose outputs are e220a8397b1dcdaf, 6e789e6aa1b965f4, 06c45d188009454f,
    /// f88bb8a8724c81ec.
    #[test]
    fn numbers_are_pinned() {
        let mut r = Rng::new(0);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        expect_test::expect!["[6e789e6aa1b965f4, 6c45d188009454f, f88bb8a8724c81ec]"]
            .assert_eq(&format!("{first:x?}"));
        let mut r = Rng::for_name(42, "image");
        expect_test::expect!["5a4502fc413d065e"].assert_eq(&format!("{:x}", r.next_u64()));
    }
}
