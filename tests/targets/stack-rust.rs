// stack-rust - a Rust target: rusty::cache::grow makes a 48 MiB
// allocation (an mmap inside the allocator), for name demangling tests.
mod cache {
    #[inline(never)]
    pub fn grow(n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n);
        v.resize(n, 1u8);
        v
    }
}

fn main() {
    let v = cache::grow(48 << 20);
    println!("stack-rust done {}", v.len());
}
