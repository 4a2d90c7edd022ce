//! Java YCSB's number generators, faithful to `site.ycsb.generator`:
//! counters (with acknowledgement), uniform, Zipfian (Gray et al.),
//! scrambled Zipfian, skewed-latest and hotspot. Each draws from a
//! caller-supplied RNG so runs can be seeded.

use crate::keys::fnvhash64;
use rand::Rng;
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// YCSB's Zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// Items of the scrambled Zipfian's inner generator.
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;
/// ζ(10^10, 0.99), hard-coded by YCSB.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// ζ over `[st, n)` added to `initial`: Σ 1/(i+1)^θ.
pub fn zeta(st: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// Gray et al.'s Zipfian over `[base, base + items)`; item `base` is the
/// most popular.
#[derive(Debug)]
pub struct Zipfian {
    base: u64,
    items: u64,
    theta: f64,
    alpha: f64,
    zeta2theta: f64,
    state: Mutex<(u64, f64, f64)>, // (count for zeta, zetan, eta)
}

impl Zipfian {
    /// Over `[min, max]` (inclusive) with constant θ, computing ζ.
    pub fn new(min: u64, max: u64, theta: f64) -> Zipfian {
        let items = max - min + 1;
        Zipfian::with_zetan(min, max, theta, zeta(0, items, theta, 0.0))
    }

    /// Over `[min, max]` with a precomputed ζ(items).
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Zipfian {
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let eta = (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan);
        Zipfian {
            base: min,
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2theta,
            state: Mutex::new((items, zetan, eta)),
        }
    }

    /// A value among the first `itemcount` items (ζ grows incrementally
    /// when `itemcount` grows; η uses the constructor's item count, as in
    /// Java).
    pub fn next_long(&self, rng: &mut impl Rng, itemcount: u64) -> u64 {
        let (zetan, eta) = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if itemcount > s.0 {
                s.1 = zeta(s.0, itemcount, self.theta, s.1);
                s.0 = itemcount;
                s.2 = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                    / (1.0 - self.zeta2theta / s.1);
            }
            (s.1, s.2)
        };
        let u: f64 = rng.random();
        let uz = u * zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (itemcount as f64 * (eta * u - eta + 1.0).powf(self.alpha)) as u64
    }

    /// A value among all items.
    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        self.next_long(rng, self.items)
    }
}

/// YCSB's `ScrambledZipfianGenerator`: Zipfian popularity, hashed so the
/// popular items spread over `[min, max]`.
#[derive(Debug)]
pub struct ScrambledZipfian {
    min: u64,
    itemcount: u64,
    inner: Zipfian,
}

impl ScrambledZipfian {
    /// Over `[min, max]` (inclusive).
    pub fn new(min: u64, max: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            min,
            itemcount: max - min + 1,
            inner: Zipfian::with_zetan(0, SCRAMBLED_ITEM_COUNT, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN),
        }
    }

    /// The next value.
    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        let z = self.inner.next(rng);
        self.min + (fnvhash64(z as i64) as u64) % self.itemcount
    }
}

/// `AcknowledgedCounterGenerator`: hands out insert key numbers; `last()`
/// is the highest number below which every insert is acknowledged.
#[derive(Debug)]
pub struct AcknowledgedCounter {
    next: AtomicU64,
    acked: Mutex<(u64, BTreeSet<u64>)>, // (limit, acknowledged above it)
}

/// YCSB's acknowledgement window.
pub const ACK_WINDOW: u64 = 1 << 20;

impl AcknowledgedCounter {
    /// Starting at `start` (= recordcount for transaction inserts).
    pub fn new(start: u64) -> AcknowledgedCounter {
        AcknowledgedCounter {
            next: AtomicU64::new(start),
            acked: Mutex::new((start.wrapping_sub(1), BTreeSet::new())),
        }
    }

    /// The next key number to insert.
    pub fn next_value(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Marks `value` inserted; an error if too many are outstanding.
    pub fn acknowledge(&self, value: u64) -> Result<(), String> {
        let mut g = self.acked.lock().unwrap_or_else(|e| e.into_inner());
        let (limit, pending) = &mut *g;
        if value.wrapping_sub(*limit) > ACK_WINDOW {
            return Err("Too many unacknowledged insertion keys.".into());
        }
        pending.insert(value);
        while pending.remove(&limit.wrapping_add(1)) {
            *limit = limit.wrapping_add(1);
        }
        Ok(())
    }

    /// Highest contiguously acknowledged value.
    pub fn last(&self) -> u64 {
        self.acked.lock().unwrap_or_else(|e| e.into_inner()).0
    }
}

/// `SkewedLatestGenerator`: the most recently inserted keys are the most
/// popular.
#[derive(Debug)]
pub struct SkewedLatest {
    zipf: Zipfian,
}

impl SkewedLatest {
    /// Over the keys `basis` has acknowledged.
    pub fn new(basis: &AcknowledgedCounter) -> SkewedLatest {
        let items = basis.last().max(1);
        SkewedLatest {
            zipf: Zipfian::new(0, items - 1, ZIPFIAN_CONSTANT),
        }
    }

    /// `max − zipf.nextLong(max)` with `max = basis.last()`.
    pub fn next(&self, rng: &mut impl Rng, basis: &AcknowledgedCounter) -> u64 {
        let max = basis.last().max(1);
        max.saturating_sub(self.zipf.next_long(rng, max))
    }
}

/// Uniform over `[lb, ub]` (inclusive).
pub fn uniform(rng: &mut impl Rng, lb: u64, ub: u64) -> u64 {
    lb + rng.random_range(0..=(ub - lb))
}

/// `HotspotIntegerGenerator`: a fraction `hot_opn` of draws fall in the
/// first `hot_data` fraction of `[lb, ub]`, uniformly; the rest uniformly in
/// the remainder.
#[derive(Debug, Clone, Copy)]
pub struct Hotspot {
    lb: u64,
    ub: u64,
    hot_data: f64,
    hot_opn: f64,
}

impl Hotspot {
    /// A hotspot generator.
    pub fn new(lb: u64, ub: u64, hot_data: f64, hot_opn: f64) -> Hotspot {
        Hotspot {
            lb,
            ub,
            hot_data: hot_data.clamp(0.0, 1.0),
            hot_opn: hot_opn.clamp(0.0, 1.0),
        }
    }

    /// The next value.
    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        let interval = self.ub - self.lb + 1;
        let hot = (interval as f64 * self.hot_data) as u64;
        let cold = interval - hot;
        if rng.random::<f64>() < self.hot_opn && hot > 0 {
            self.lb + rng.random_range(0..hot)
        } else if cold > 0 {
            self.lb + hot + rng.random_range(0..cold)
        } else {
            self.lb + rng.random_range(0..interval)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The exact distribution Gray et al.'s algorithm draws from (YCSB's
    /// "Zipfian"): item 0 with probability 1/ζ(n), item 1 with 0.5^θ/ζ(n),
    /// and for u above those the inverse `⌊n(ηu − η + 1)^α⌋`, so
    /// P(X ≤ k) = max(u₂, F(k)) with F(k) = (((k+1)/n)^(1−θ) − 1 + η)/η.
    fn gray_pmf(n: u64, theta: f64) -> Vec<f64> {
        let zn = zeta(0, n, theta, 0.0);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta(0, 2, theta, 0.0) / zn);
        let u1 = 1.0 / zn;
        let u2 = (1.0 + 0.5f64.powf(theta)) / zn;
        let f = |k: u64| {
            ((((k + 1) as f64 / n as f64).powf(1.0 - theta) - 1.0 + eta) / eta).clamp(0.0, 1.0)
        };
        let cdf = |k: u64| -> f64 {
            if k == 0 {
                u1 + (f(0) - u2).max(0.0)
            } else {
                u2.max(f(k)).min(1.0)
            }
        };
        (0..n)
            .map(|k| cdf(k) - if k == 0 { 0.0 } else { cdf(k - 1) })
            .collect()
    }

    fn chi_square(counts: &[u64], pmf: &[f64], draws: u64) -> f64 {
        counts
            .iter()
            .zip(pmf)
            .filter(|(_, p)| **p > 0.0)
            .map(|(&c, p)| {
                let e = draws as f64 * p;
                (c as f64 - e).powi(2) / e
            })
            .sum()
    }

    /// Chi-square goodness of fit of the generator against the formula of
    /// Gray et al.'s algorithm (what Java YCSB's ZipfianGenerator draws
    /// from). n = 100 items, 99 degrees of freedom: the 0.1 % critical value
    /// is 148.2, so a correct generator fails one seed in a thousand (the
    /// seed is fixed) and a wrong one fails by orders of magnitude.
    ///
    /// Against the *exact* Zipf law p(i) = i^−θ/ζ(n) the same sample gives
    /// chi-square ≈ 2,650: the algorithm is an approximation (exact for the
    /// two hottest items, continuous inverse for the rest), in Java YCSB as
    /// here. The test pins that too, so a "fix" that changes the
    /// distribution away from YCSB's is caught.
    #[test]
    fn zipfian_matches_the_formula() {
        let n = 100u64;
        let z = Zipfian::new(0, n - 1, ZIPFIAN_CONSTANT);
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let draws = 1_000_000u64;
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[z.next(&mut rng) as usize] += 1;
        }
        let pmf = gray_pmf(n, ZIPFIAN_CONSTANT);
        assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let chi2 = chi_square(&counts, &pmf, draws);
        assert!(
            chi2 < 148.2,
            "chi-square {chi2:.1} over 99 degrees of freedom"
        );
        // The two hottest items follow Zipf's law exactly.
        let zn = zeta(0, n, ZIPFIAN_CONSTANT, 0.0);
        let exact: Vec<f64> = (0..n)
            .map(|i| ((i + 1) as f64).powf(-ZIPFIAN_CONSTANT) / zn)
            .collect();
        for i in 0..2 {
            let expect = exact[i] * draws as f64;
            assert!(
                (counts[i] as f64 - expect).abs() < 5.0 * expect.sqrt(),
                "item {i}"
            );
        }
        let vs_exact = chi_square(&counts, &exact, draws);
        assert!(
            vs_exact > 1000.0,
            "Gray's approximation departs from the exact law: {vs_exact:.0}"
        );
        assert!(counts[0] > 10 * counts[50]);
    }

    #[test]
    fn zipfian_grows_its_item_count_incrementally() {
        let z = Zipfian::new(0, 9, ZIPFIAN_CONSTANT);
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let max = (0..100_000)
            .map(|_| z.next_long(&mut rng, 1000))
            .max()
            .unwrap();
        assert!(max > 100 && max < 1000, "{max}");
        let s = z.state.lock().unwrap();
        assert_eq!(s.0, 1000);
        assert!((s.1 - zeta(0, 1000, ZIPFIAN_CONSTANT, 0.0)).abs() < 1e-9);
    }

    #[test]
    fn scrambled_zipfian_stays_in_range_and_is_skewed() {
        let g = ScrambledZipfian::new(100, 1099);
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..200_000 {
            let v = g.next(&mut rng);
            assert!((100..=1099).contains(&v));
            *counts.entry(v).or_insert(0u64) += 1;
        }
        let max = *counts.values().max().unwrap();
        assert!(
            max > 200_000 / 1000 * 20,
            "the hottest item is far above uniform: {max}"
        );
    }

    #[test]
    fn acknowledged_counter_advances_only_over_contiguous_acks() {
        let c = AcknowledgedCounter::new(10);
        assert_eq!(c.last(), 9);
        let (a, b, d) = (c.next_value(), c.next_value(), c.next_value());
        assert_eq!((a, b, d), (10, 11, 12));
        c.acknowledge(11).unwrap();
        assert_eq!(c.last(), 9);
        c.acknowledge(10).unwrap();
        assert_eq!(c.last(), 11);
        c.acknowledge(12).unwrap();
        assert_eq!(c.last(), 12);
    }

    #[test]
    fn latest_favours_the_newest_and_hotspot_the_hot_set() {
        let c = AcknowledgedCounter::new(1000);
        let l = SkewedLatest::new(&c);
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let newest = (0..10_000).filter(|_| l.next(&mut rng, &c) >= 990).count();
        assert!(newest > 3000, "{newest}");
        let h = Hotspot::new(0, 999, 0.2, 0.8);
        let hot = (0..100_000).filter(|_| h.next(&mut rng) < 200).count();
        assert!((78_000..82_000).contains(&hot), "{hot}");
        let u: Vec<u64> = (0..1000).map(|_| uniform(&mut rng, 5, 7)).collect();
        assert!(u.iter().all(|v| (5..=7).contains(v)) && u.contains(&5) && u.contains(&7));
    }
}
