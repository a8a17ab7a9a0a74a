//! A small deterministic generator (SplitMix64): the same seed gives the same numbers on
//! every host, using only integer arithmetic and exact float conversions.

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
}
