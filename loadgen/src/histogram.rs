//! An HdrHistogram with exactly the layout wrk2 uses (1 µs .. 24 h, 3 significant
//! digits: 27 buckets of 2048 sub-buckets), and the statistics wrk2 derives from it.
//!
//! We keep our own small implementation rather than a general-purpose crate so that
//! every derived number (mean over median-equivalent values, `hdr_max` returning the
//! lowest-equivalent value, the percentile iteration, the "+/- Stdev" count) follows
//! wrk2's definitions to the digit. The `hdrhistogram` crate is only used to encode
//! interval-log payloads (see `hdr_log`).

/// Highest value wrk2 tracks: one day in microseconds.
pub const HIGHEST_TRACKABLE: u64 = 24 * 60 * 60 * 1_000_000;
pub const SIGNIFICANT_FIGURES: u32 = 3;
const SUB_BUCKET_HALF_COUNT_MAGNITUDE: u32 = 10;
pub const SUB_BUCKET_COUNT: usize = 2048;
const SUB_BUCKET_HALF_COUNT: usize = SUB_BUCKET_COUNT / 2;
const SUB_BUCKET_MASK: u64 = (SUB_BUCKET_COUNT as u64) - 1;
pub const BUCKET_COUNT: usize = 27;
const COUNTS_LEN: usize = (BUCKET_COUNT + 1) * SUB_BUCKET_HALF_COUNT;

#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    total: u64,
    /// Index of the highest non-empty bucket + 1 (0 when empty): bounds iteration.
    used_len: usize,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram(total={})", self.total)
    }
}

/// One bucket of the histogram, as wrk2's iterators see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub lowest: u64,
    pub highest: u64,
    pub count: u64,
    /// Cumulative count up to and including this bucket.
    pub cumulative: u64,
}

impl Bucket {
    /// wrk2's "median equivalent value": lowest + half the bucket width.
    pub fn midpoint(&self) -> u64 {
        self.lowest + ((self.highest - self.lowest + 1) >> 1)
    }
}

#[inline]
fn index_for(value: u64) -> usize {
    let pow2ceiling = 64 - (value | SUB_BUCKET_MASK).leading_zeros();
    let bucket = pow2ceiling - (SUB_BUCKET_HALF_COUNT_MAGNITUDE + 1);
    let sub = (value >> bucket) as usize;
    ((bucket as usize + 1) << SUB_BUCKET_HALF_COUNT_MAGNITUDE) + sub - SUB_BUCKET_HALF_COUNT
}

#[inline]
fn lowest_of_index(index: usize) -> (u64, u64) {
    // Returns (lowest equivalent value, size of the equivalent range).
    let bucket = (index >> SUB_BUCKET_HALF_COUNT_MAGNITUDE) as i64 - 1;
    let mut sub = (index & (SUB_BUCKET_HALF_COUNT - 1)) + SUB_BUCKET_HALF_COUNT;
    let bucket = if bucket < 0 {
        sub -= SUB_BUCKET_HALF_COUNT;
        0
    } else {
        bucket as u32
    };
    ((sub as u64) << bucket, 1u64 << bucket)
}

/// Lowest value that lands in the same bucket as `value`.
#[cfg(test)]
pub fn lowest_equivalent(value: u64) -> u64 {
    lowest_of_index(index_for(value)).0
}

/// Highest value that lands in the same bucket as `value`.
#[cfg(test)]
pub fn highest_equivalent(value: u64) -> u64 {
    let (low, size) = lowest_of_index(index_for(value));
    low + size - 1
}

impl Histogram {
    pub fn new() -> Self {
        Histogram { counts: vec![0u64; COUNTS_LEN].into_boxed_slice(), total: 0, used_len: 0 }
    }

    /// Records one value; values beyond one day are clamped (they cannot be real here).
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.record_n(value, 1);
    }

    #[inline]
    pub fn record_n(&mut self, value: u64, n: u64) {
        let idx = index_for(value.min(HIGHEST_TRACKABLE));
        self.counts[idx] += n;
        self.total += n;
        if idx >= self.used_len {
            self.used_len = idx + 1;
        }
    }

    pub fn add(&mut self, other: &Histogram) {
        for i in 0..other.used_len {
            self.counts[i] += other.counts[i];
        }
        self.total += other.total;
        self.used_len = self.used_len.max(other.used_len);
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Every bucket from the lowest index up to the one where the cumulative count
    /// reaches the total (wrk2's `hdr_iter`), empty buckets included.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        let mut cumulative = 0u64;
        let total = self.total;
        (0..self.used_len).map_while(move |i| {
            if cumulative >= total {
                return None;
            }
            let count = self.counts[i];
            cumulative += count;
            let (lowest, size) = lowest_of_index(i);
            Some(Bucket { lowest, highest: lowest + size - 1, count, cumulative })
        })
    }

    /// Non-empty buckets only, in value order.
    pub fn recorded(&self) -> impl Iterator<Item = Bucket> + '_ {
        self.buckets().filter(|b| b.count != 0)
    }

    /// wrk2's `hdr_min`: the lowest value of the first non-empty bucket.
    pub fn min(&self) -> u64 {
        self.recorded().next().map_or(0, |b| b.lowest)
    }

    /// wrk2's `hdr_max`: the *lowest* equivalent value of the highest non-empty bucket.
    pub fn max(&self) -> u64 {
        self.recorded().last().map_or(0, |b| b.lowest)
    }

    /// How many recorded values exceed `v` (exactly, for v < 2048; else to bucket precision).
    pub fn count_above(&self, v: u64) -> u64 {
        self.recorded().filter(|b| b.lowest > v).map(|b| b.count).sum()
    }

    /// wrk2's `hdr_value_at_percentile`: highest equivalent value of the bucket holding
    /// the rank `round(p/100 * total)` (at least 1).
    pub fn value_at_percentile(&self, percentile: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let p = percentile.min(100.0);
        let rank = (((p / 100.0) * self.total as f64) + 0.5) as i64;
        let rank = rank.max(1) as u64;
        self.recorded().find(|b| b.cumulative >= rank).map_or(0, |b| b.highest)
    }

    /// Mean over bucket midpoints (wrk2's `hdr_mean`); 0 for an empty histogram.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let sum: u128 = self.recorded().map(|b| b.count as u128 * b.midpoint() as u128).sum();
        sum as f64 / self.total as f64
    }

    /// Population standard deviation over bucket midpoints (wrk2's `hdr_stddev`).
    pub fn stdev(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let mean = self.mean();
        let dev: f64 = self
            .recorded()
            .map(|b| {
                let mid = b.midpoint() as f64;
                (mid - mean) * (mid - mean) * b.count as f64
            })
            .sum();
        (dev / self.total as f64).sqrt()
    }

    /// Percentage of values within `mean ± n·stdev`, counted the way wrk2 counts it on
    /// a histogram (bucket granularity, see `stats_within_stdev`).
    pub fn within_stdev(&self, mean: f64, stdev: f64, n: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let upper = (mean + stdev * n) as i64;
        let lower = (mean - stdev * n) as i64;
        let mut lower_count = 0u64;
        let mut upper_count = None;
        for b in self.buckets() {
            if lower > b.lowest as i64 {
                lower_count = b.cumulative;
            }
            if upper < b.highest as i64 {
                upper_count = Some(b.cumulative);
                break;
            }
        }
        let upper_count = upper_count.unwrap_or(self.total);
        100.0 * (upper_count as f64 - lower_count as f64) / self.total as f64
    }

    /// The "Detailed Percentile spectrum" rows: HdrHistogram's percentile iteration
    /// with `ticks_per_half_distance` ticks per halving of the distance to 100%, ending
    /// with a repeated last value at percentile 100 (printed by wrk2 as "inf").
    pub fn percentile_spectrum(&self, ticks_per_half_distance: u32) -> Vec<SpectrumRow> {
        let buckets: Vec<Bucket> = self.buckets().collect();
        let total = self.total;
        let mut rows = Vec::new();
        // Position of the iterator: None before the first bucket.
        let mut pos: Option<usize> = None;
        let mut iterate_to = 0.0f64;
        let cumulative_at = |p: Option<usize>| p.map_or(0, |i| buckets[i].cumulative);
        loop {
            if cumulative_at(pos) >= total {
                let value = pos.map_or(0, |i| buckets[i].highest);
                rows.push(SpectrumRow { value, percentile: 100.0, total_count: cumulative_at(pos) });
                return rows;
            }
            let mut i = pos.unwrap_or(0);
            loop {
                let b = buckets[i];
                let current = 100.0 * b.cumulative as f64 / total as f64;
                if b.count != 0 && iterate_to <= current {
                    rows.push(SpectrumRow { value: b.highest, percentile: iterate_to, total_count: b.cumulative });
                    let halvings = ((100.0 / (100.0 - iterate_to)).ln() / 2f64.ln()) as i32 + 1;
                    let ticks = ticks_per_half_distance as u64 * 2f64.powi(halvings) as u64;
                    iterate_to += 100.0 / ticks as f64;
                    break;
                }
                if b.cumulative >= total || i + 1 >= buckets.len() {
                    break;
                }
                i += 1;
            }
            pos = Some(i);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpectrumRow {
    /// Highest equivalent value of the bucket, in recorded units (µs).
    pub value: u64,
    /// Percentile in 0..=100.
    pub percentile: f64,
    pub total_count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_wrk2() {
        // wrk2 prints "#[Buckets = 27, SubBuckets = 2048]" for 1 µs .. 24 h at 3 digits.
        let mut trackable = SUB_BUCKET_MASK;
        let mut buckets = 1;
        while trackable < HIGHEST_TRACKABLE {
            trackable <<= 1;
            buckets += 1;
        }
        assert_eq!(buckets, BUCKET_COUNT);
        assert_eq!(SUB_BUCKET_COUNT, 2048);
    }

    #[test]
    fn equivalent_ranges() {
        assert_eq!(lowest_equivalent(2047), 2047);
        assert_eq!(highest_equivalent(2049), 2049);
        assert_eq!(lowest_equivalent(2049), 2048);
        // 8272 µs lies in the 8-wide sub-buckets: shown as 8.279 ms (highest) and
        // 8.272 ms (lowest) in the fixture get-t2-c64-R10000-L.txt.
        assert_eq!(lowest_equivalent(8275), 8272);
        assert_eq!(highest_equivalent(8275), 8279);
        assert_eq!(highest_equivalent(1_001_984), 1_002_495);
        assert_eq!(lowest_equivalent(1_002_000), 1_001_984);
    }

    #[test]
    fn max_is_lowest_equivalent_and_p100_highest() {
        let mut h = Histogram::new();
        for v in [10, 20, 30, 8275] {
            h.record(v);
        }
        assert_eq!(h.max(), 8272);
        assert_eq!(h.value_at_percentile(100.0), 8279);
        assert_eq!(h.min(), 10);
        assert_eq!(h.value_at_percentile(50.0), 20);
        assert_eq!(h.total(), 4);
    }

    #[test]
    fn mean_uses_bucket_midpoints() {
        let mut h = Histogram::new();
        h.record(4097); // bucket [4096, 4099], midpoint 4098
        assert_eq!(h.mean(), 4098.0);
        assert_eq!(h.stdev(), 0.0);
    }

    #[test]
    fn spectrum_of_single_value() {
        let mut h = Histogram::new();
        h.record_n(25, 10);
        let rows = h.percentile_spectrum(5);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], SpectrumRow { value: 25, percentile: 0.0, total_count: 10 });
        assert_eq!(rows[1], SpectrumRow { value: 25, percentile: 100.0, total_count: 10 });
    }

    #[test]
    fn spectrum_ticks_follow_half_distances() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let rows = h.percentile_spectrum(5);
        let ps: Vec<f64> = rows.iter().take(12).map(|r| r.percentile).collect();
        let expect = [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 77.5];
        for (a, b) in ps.iter().zip(expect.iter()) {
            assert!((a - b).abs() < 1e-9, "{ps:?}");
        }
        assert_eq!(rows.last().unwrap().percentile, 100.0);
        assert_eq!(rows.last().unwrap().total_count, 10_000);
    }

    #[test]
    fn empty_histogram_is_all_zero_not_nan() {
        let h = Histogram::new();
        assert_eq!(h.mean(), 0.0);
        assert_eq!(h.stdev(), 0.0);
        assert_eq!(h.max(), 0);
        assert_eq!(h.value_at_percentile(99.0), 0);
        assert_eq!(h.within_stdev(0.0, 0.0, 1.0), 0.0);
        assert_eq!(h.percentile_spectrum(5).len(), 1);
    }

    #[test]
    fn within_stdev_counts_buckets_like_wrk2() {
        let mut h = Histogram::new();
        for v in [1u64, 2, 3, 100] {
            h.record(v);
        }
        let (m, s) = (h.mean(), h.stdev());
        // mean 26.5, stdev ≈ 42.4: lower bound negative, upper 68 → 3 of 4 values.
        assert!((h.within_stdev(m, s, 1.0) - 75.0).abs() < 1e-9);
    }
}
