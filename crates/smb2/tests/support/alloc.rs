//! Counts heap allocations made by this thread inside [`measure`], to show
//! that the session's hot path does not allocate. Counting needs
//! [`Counting`] installed as the global allocator (tests/all.rs does);
//! elsewhere `measure` counts nothing.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        System.realloc(ptr, layout, new_size)
    }
}

fn note() {
    // try_with: the allocator may run while thread locals are torn down.
    if MEASURING.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

/// Runs `f`, counting this thread's allocations and reallocations in it.
pub fn measure<T>(f: impl FnOnce() -> T) -> T {
    MEASURING.with(|m| m.set(true));
    let out = f();
    MEASURING.with(|m| m.set(false));
    out
}

/// Allocations counted so far on this thread.
pub fn count() -> u64 {
    COUNT.with(Cell::get)
}
