use super::*;

#[test]
fn splitmix_is_seeded_and_normal_is_centered() {
    let mut a = SplitMix64::new(7);
    let mut b = SplitMix64::new(7);
    assert_eq!(a.next_u64(), b.next_u64());
    let n = 20_000;
    let samples: Vec<i64> = (0..n).map(|_| a.normal(100)).collect();
    let mean = samples.iter().sum::<i64>() as f64 / n as f64;
    let var = samples
        .iter()
        .map(|&x| (x as f64 - mean).powi(2))
        .sum::<f64>()
        / n as f64;
    assert!(mean.abs() < 3.0, "mean {mean}");
    assert!((var.sqrt() - 100.0).abs() < 5.0, "sd {}", var.sqrt());
    for _ in 0..1000 {
        assert!(a.below(10) < 10);
    }
}
