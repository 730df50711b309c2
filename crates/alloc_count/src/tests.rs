#[global_allocator]
static GLOBAL: super::Counting = super::Counting;

#[test]
fn counts_this_threads_allocations_only() {
    use std::hint::black_box;
    // black_box: in release builds the optimizer may otherwise remove an unused allocation.
    let before = super::allocs();
    let v: Vec<u64> = black_box(Vec::with_capacity(16));
    let mut w = black_box(vec![0u8; 4]);
    w.reserve(1024);
    let w = black_box(w);
    assert_eq!(super::allocs() - before, 3, "with_capacity, vec!, reserve");
    drop((v, w));
    let other = std::thread::spawn(|| {
        let before = super::allocs();
        let b = black_box(Box::new(7u32));
        (super::allocs() - before, *b)
    })
    .join()
    .unwrap();
    assert_eq!(other, (1, 7));
    let before = super::allocs();
    let x = 5u64 + 1;
    assert_eq!(x, 6);
    assert_eq!(super::allocs() - before, 0, "no allocation, no count");
}
