//! A client's handle table: the loadfile's handle numbers mapped to what a
//! backend opened for them (dbench's 200-slot table; more open handles stop
//! the client). Fixed size, so mapping never allocates.

/// dbench's per-client limit on open handles.
pub const MAX_HANDLES: usize = 200;

/// Loadfile handle → backend handle `H`.
#[derive(Debug)]
pub struct Handles<H> {
    slots: Vec<Option<(i64, H)>>,
}

impl<H> Default for Handles<H> {
    fn default() -> Self {
        Self { slots: (0..MAX_HANDLES).map(|_| None).collect() }
    }
}

impl<H> Handles<H> {
    /// Maps `handle` to `value`; Err(value) when all slots are taken.
    pub fn insert(&mut self, handle: i64, value: H) -> Result<(), H> {
        // A number opened again replaces its old mapping, as a reused handle does.
        if let Some(slot) = self.slots.iter_mut().find(|s| matches!(s, Some((h, _)) if *h == handle)) {
            *slot = Some((handle, value));
            return Ok(());
        }
        match self.slots.iter_mut().find(|s| s.is_none()) {
            Some(slot) => {
                *slot = Some((handle, value));
                Ok(())
            }
            None => Err(value),
        }
    }

    /// What `handle` maps to.
    pub fn get(&mut self, handle: i64) -> Option<&mut H> {
        self.slots.iter_mut().find_map(|s| match s {
            Some((h, v)) if *h == handle => Some(v),
            _ => None,
        })
    }

    /// Unmaps `handle`, handing back what it mapped to.
    pub fn remove(&mut self, handle: i64) -> Option<H> {
        let slot = self.slots.iter_mut().find(|s| matches!(s, Some((h, _)) if *h == handle))?;
        slot.take().map(|(_, v)| v)
    }

    /// Unmaps one mapping, if any is left, handing it back (closing handles one reply at a time).
    pub fn pop(&mut self) -> Option<H> {
        self.slots.iter_mut().find_map(|s| s.take().map(|(_, v)| v))
    }

    /// Unmaps everything (at the end of a client's run), handing each back.
    pub fn drain(&mut self) -> impl Iterator<Item = H> + '_ {
        self.slots.iter_mut().filter_map(|s| s.take().map(|(_, v)| v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_replaces_removes_and_refuses_the_201st() {
        let mut t = Handles::default();
        for h in 0..MAX_HANDLES as i64 {
            t.insert(10_000 + h, h).expect("room");
        }
        assert_eq!(t.insert(1, 99), Err(99));
        t.insert(10_005, 55).expect("replacing needs no room");
        assert_eq!(t.get(10_005).copied(), Some(55));
        assert_eq!(t.remove(10_005), Some(55));
        assert_eq!(t.get(10_005), None);
        t.insert(1, 1).expect("a freed slot");
        assert_eq!(t.drain().count(), MAX_HANDLES);
        assert_eq!(t.get(1), None);
    }
}
