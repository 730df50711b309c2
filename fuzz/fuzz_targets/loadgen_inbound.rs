//! Arbitrary bytes into the load generator's one-pass reader of inbound messages
//! (`loadgen::inbound::scan`, which reads every report the exchange sends a bot): it never
//! panics, an error's offset lies within the input, and every value it returns is a slice of
//! the input that ends before a SOH or at the input's end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loadgen::inbound::{scan, ScanError};

fuzz_target!(|data: &[u8]| {
    match scan(data) {
        Err(ScanError::BadTag(at)) | Err(ScanError::Unterminated(at)) => {
            assert!(at <= data.len(), "offset {at} past {} bytes", data.len())
        }
        Err(ScanError::NoMsgType) => {}
        Ok(m) => {
            let within = |v: &[u8]| {
                let (lo, hi) = (data.as_ptr() as usize, data.as_ptr() as usize + data.len());
                let p = v.as_ptr() as usize;
                v.is_empty() || (p >= lo && p + v.len() <= hi)
            };
            assert!(!m.msg_type.is_empty() && within(m.msg_type));
            assert_eq!(m.report.msg_type, m.msg_type[0]);
            for v in [m.report.cl_ord_id, m.report.symbol, m.test_req_id] {
                assert!(within(v));
            }
            for v in [m.report.orig_cl_ord_id, m.report.text]
                .into_iter()
                .flatten()
            {
                assert!(within(v));
            }
        }
    }
});
