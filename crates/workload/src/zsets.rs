//! The sorted sets of paper C's "complex" workload
//! (`kvbench.datamodel=sortedsets`): groups of `sets` sorted sets of
//! `members` members each, and what a `ZUNIONSTORE` of one group must give.
//! No I/O; the contents are a pure function of the shape, so the load, the
//! check of every reply and the check of stored results agree by
//! construction, and a run can be repeated exactly.
//!
//! Record `r` is set `r % sets` of group `r / sets`. Set `i` holds members
//! `m<j>` for `j` in `i*step .. i*step + members` with `step = members / 2`:
//! each set shares half its members with the next, so a union has to merge
//! (and sum the scores of) overlapping members, as any real union does.
//! Member `j` of set `i` in group `g` scores `(7g + 13i + j) mod 1000`, a
//! whole number, so sums are exact in floating point.
//!
//! Key names carry the group in a hash tag (`{zset3}:1`, `{zset3}:dest:7`),
//! so a group and its destinations share one Redis Cluster slot, which
//! `ZUNIONSTORE` requires.

/// How big the sorted sets are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZsetShape {
    /// Sorted sets per group, the union's inputs (`kvbench.zset.sets`).
    pub sets: u32,
    /// Members per set (`kvbench.zset.members`).
    pub members: u32,
}

impl Default for ZsetShape {
    /// Paper C's: four sets of 20,000 members.
    fn default() -> Self {
        ZsetShape {
            sets: 4,
            members: 20_000,
        }
    }
}

impl ZsetShape {
    /// How far each set's members start after the previous set's.
    fn step(&self) -> u64 {
        u64::from(self.members / 2)
    }

    /// The group and the set within it of record `keynum`.
    pub fn locate(&self, keynum: u64) -> (u64, u32) {
        let sets = u64::from(self.sets.max(1));
        (keynum / sets, (keynum % sets) as u32)
    }

    /// Each `(score, member number)` of set `set` of group `group`, in
    /// member order.
    pub fn members(&self, group: u64, set: u32) -> impl Iterator<Item = (u64, u64)> {
        let first = u64::from(set) * self.step();
        let base = 7 * group + 13 * u64::from(set);
        (first..first + u64::from(self.members)).map(move |j| ((base + j) % 1000, j))
    }

    /// The cardinality of the union of a group's sets (its `ZUNIONSTORE`
    /// reply), the same for every group.
    pub fn union_cardinality(&self) -> u64 {
        if self.sets == 0 {
            return 0;
        }
        u64::from(self.sets - 1) * self.step() + u64::from(self.members)
    }

    /// The sum of all scores in the union of group `group` (the union sums
    /// the scores of a member present in several sets, `ZUNIONSTORE`'s
    /// default `AGGREGATE SUM`, so this is the sum over every set).
    pub fn union_score_sum(&self, group: u64) -> u64 {
        (0..self.sets)
            .map(|i| self.members(group, i).map(|(s, _)| s).sum::<u64>())
            .sum()
    }

    /// Appends the name of set `set` of group `group`: `{<prefix><group>}:<set>`.
    pub fn write_set_key(prefix: &str, group: u64, set: u32, out: &mut Vec<u8>) {
        Self::write_tag(prefix, group, out);
        out.extend_from_slice(itoa::Buffer::new().format(set).as_bytes());
    }

    /// Appends the name of client `client`'s destination for group
    /// `group`: `{<prefix><group>}:dest:<client>`.
    pub fn write_dest_key(prefix: &str, group: u64, client: u32, out: &mut Vec<u8>) {
        Self::write_tag(prefix, group, out);
        out.extend_from_slice(b"dest:");
        out.extend_from_slice(itoa::Buffer::new().format(client).as_bytes());
    }

    fn write_tag(prefix: &str, group: u64, out: &mut Vec<u8>) {
        out.push(b'{');
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(itoa::Buffer::new().format(group).as_bytes());
        out.extend_from_slice(b"}:");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_union_formulas_match_a_union_computed_member_by_member() {
        for shape in [
            ZsetShape::default(),
            ZsetShape {
                sets: 3,
                members: 7,
            },
            ZsetShape {
                sets: 1,
                members: 1,
            },
        ] {
            for group in [0, 5] {
                let mut union: BTreeMap<u64, u64> = BTreeMap::new();
                for set in 0..shape.sets {
                    for (score, member) in shape.members(group, set) {
                        *union.entry(member).or_default() += score;
                    }
                }
                assert_eq!(union.len() as u64, shape.union_cardinality(), "{shape:?}");
                assert_eq!(
                    union.values().sum::<u64>(),
                    shape.union_score_sum(group),
                    "{shape:?}"
                );
            }
        }
    }

    #[test]
    fn keys_share_a_hash_tag_per_group() {
        let mut k = Vec::new();
        ZsetShape::write_set_key("zset", 12, 3, &mut k);
        assert_eq!(k, b"{zset12}:3");
        k.clear();
        ZsetShape::write_dest_key("zset", 12, 40, &mut k);
        assert_eq!(k, b"{zset12}:dest:40");
        assert_eq!(ZsetShape::default().locate(9), (2, 1));
    }
}
