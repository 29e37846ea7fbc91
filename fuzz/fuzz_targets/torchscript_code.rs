//! See `socair_torch_zip::torchscript::check_code`: TorchScript source as torch.jit.load
//! parses it, judged by socair's rules, on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_torch_zip::torchscript::check_code(data);
});
