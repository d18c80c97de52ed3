//! How many requests a new connection carries when `keepalive_requests` is
//! set (SPECweb99's persistent-connection model, reference §3.2): a draw per
//! connection, pure arithmetic on the worker's RNG. Knows nothing of sockets.

use crate::rng::Rng;

/// The per-connection draw: kept alive with `probability`, then a uniform
/// count in `min..=max`; otherwise one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeepaliveDraw {
    /// Chance that a new connection is a keep-alive one.
    pub probability: f64,
    /// Fewest requests on a keep-alive connection.
    pub min: u32,
    /// Most requests on a keep-alive connection.
    pub max: u32,
}

impl KeepaliveDraw {
    /// The draw that puts `share` of the requests on keep-alive connections
    /// of `min..=max` requests. With mean count m, a connection is kept alive
    /// with p = s / (m(1−s) + s): then requests on them are p·m out of
    /// p·m + (1−p), which is s.
    pub fn new([min, max]: [u32; 2], share: f64) -> Self {
        let mean = (f64::from(min) + f64::from(max)) / 2.0;
        let denominator = mean * (1.0 - share) + share;
        let probability = if denominator > 0.0 { share / denominator } else { 0.0 };
        Self { probability, min, max }
    }

    /// Requests the next connection carries.
    pub fn draw(&self, rng: &mut Rng) -> u32 {
        if rng.next_f64() >= self.probability {
            return 1;
        }
        self.min + rng.below((self.max - self.min) as usize + 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specweb99_share_gives_a_fifth_of_connections_and_seventy_percent_of_requests() {
        let draw = KeepaliveDraw::new([5, 15], 0.70);
        assert!((draw.probability - 0.7 / 3.7).abs() < 1e-12, "{}", draw.probability);
        let mut rng = Rng::new(7);
        let (mut on_keepalive, mut all, mut counts) = (0u64, 0u64, [0u64; 16]);
        for _ in 0..400_000 {
            let n = draw.draw(&mut rng);
            counts[n as usize] += 1;
            all += u64::from(n);
            // A one-request draw is the other branch: 1 is outside 5..=15.
            if n > 1 {
                on_keepalive += u64::from(n);
            }
        }
        let share = on_keepalive as f64 / all as f64;
        assert!((share - 0.70).abs() < 0.005, "share of requests on keep-alive connections {share}");
        assert_eq!(counts[2..5].iter().sum::<u64>(), 0);
        let keepalive: u64 = counts[5..].iter().sum();
        for (n, &c) in counts.iter().enumerate().skip(5) {
            let p = c as f64 / keepalive as f64;
            assert!((p - 1.0 / 11.0).abs() < 0.01, "count {n}: {p}");
        }
    }

    #[test]
    fn the_edges_of_the_share() {
        let mut rng = Rng::new(1);
        let always = KeepaliveDraw::new([3, 3], 1.0);
        assert_eq!(always.probability, 1.0);
        assert!((0..1000).all(|_| always.draw(&mut rng) == 3));
        let never = KeepaliveDraw::new([3, 9], 0.0);
        assert!((0..1000).all(|_| never.draw(&mut rng) == 1));
    }
}
