//! [`ImageBuilder`]: the one way tests, kernels, the CLI and the compiler make images. It places
//! or allocates segments per tile (first-fit over the SRAM regions, with alignment), maps
//! assembled objects onto tiles, deduplicates contents, sets entries, declares host tensors, and
//! validates everything in [`ImageBuilder::finish`].
//!
//! The SRAM layout comes in as plain numbers (`(name, start, size)` per region), so this crate
//! does not depend on the simulator's machine description.

use super::alloc::TileSpace;
use super::{
    BlobId, HostTensor, Image, ImageError, MachineFingerprint, Segment, SramCategory, SymbolTable,
    SymbolTableId, TileEntry, TileImage, WORKER_CONTEXTS,
};
use crate::asm::object::Object;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// One SRAM region of the target machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SramRegion {
    pub name: String,
    pub start: u32,
    pub size: u32,
}

impl SramRegion {
    fn end(&self) -> u64 {
        u64::from(self.start) + u64::from(self.size)
    }
}

/// Where [`ImageBuilder::alloc`] may put a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionChoice {
    /// The first region (in address order) with room.
    Any,
    /// Only the region with this name.
    Named(String),
}

impl RegionChoice {
    /// The ipu21 linear region.
    pub fn standard() -> RegionChoice {
        RegionChoice::Named("standard".into())
    }

    /// The ipu21 interleaved region (needed by 128-bit loads).
    pub fn interleaved() -> RegionChoice {
        RegionChoice::Named("interleaved".into())
    }
}

/// How [`ImageBuilder::add_object`] categorises an object's sections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectRules {
    /// Category of sections that hold code (`Code` or `ExchangeProgram`).
    pub code: SramCategory,
    /// Category of other sections unless `sections` names them.
    pub data: SramCategory,
    /// Per-section overrides by exact section name.
    pub sections: Vec<(String, SramCategory)>,
}

impl Default for ObjectRules {
    fn default() -> ObjectRules {
        ObjectRules {
            code: SramCategory::Code,
            data: SramCategory::Constants,
            sections: Vec::new(),
        }
    }
}

impl ObjectRules {
    /// Adds an override: section `name` gets `category`.
    pub fn section(mut self, name: impl Into<String>, category: SramCategory) -> ObjectRules {
        self.sections.push((name.into(), category));
        self
    }

    fn category_of(&self, name: &str, has_code: bool) -> SramCategory {
        if let Some((_, category)) = self.sections.iter().find(|(n, _)| n == name) {
            return category.clone();
        }
        if has_code {
            self.code.clone()
        } else {
            self.data.clone()
        }
    }
}

#[derive(Clone, Debug, Default)]
struct BuilderTile {
    image: TileImage,
    space: TileSpace,
}

/// Builds an [`Image`]; see the module docs.
#[derive(Clone, Debug)]
pub struct ImageBuilder {
    machine: MachineFingerprint,
    regions: Vec<SramRegion>,
    tiles: BTreeMap<u32, BuilderTile>,
    blobs: Vec<Vec<u8>>,
    blob_index: HashMap<u64, Vec<BlobId>>,
    symbol_tables: Vec<SymbolTable>,
    host_tensors: Vec<HostTensor>,
}

impl ImageBuilder {
    /// A builder for `machine` whose tiles have the SRAM regions `(name, start, size)` (in
    /// address order, inside the machine's SRAM). An empty list means one region `sram` covering
    /// all of it.
    pub fn new(
        machine: MachineFingerprint,
        regions: Vec<(String, u32, u32)>,
    ) -> Result<ImageBuilder, ImageError> {
        let mut list: Vec<SramRegion> = regions
            .into_iter()
            .map(|(name, start, size)| SramRegion { name, start, size })
            .collect();
        if list.is_empty() {
            list.push(SramRegion {
                name: "sram".into(),
                start: machine.sram_base,
                size: machine.sram_size,
            });
        }
        let mut previous_end = u64::from(machine.sram_base);
        for (index, region) in list.iter().enumerate() {
            let bad = |problem: &str| ImageError::BadRegion {
                name: region.name.clone(),
                start: region.start,
                size: region.size,
                problem: problem.into(),
            };
            if region.name.is_empty() {
                return Err(bad("the name is empty"));
            }
            if list[..index].iter().any(|r| r.name == region.name) {
                return Err(bad("the name is used twice"));
            }
            if region.size == 0 {
                return Err(bad("the region is empty"));
            }
            if u64::from(region.start) < previous_end || region.end() > machine.sram_end() {
                return Err(bad(
                    "regions must be in address order, disjoint, and inside tile SRAM",
                ));
            }
            previous_end = region.end();
        }
        Ok(ImageBuilder {
            machine,
            regions: list,
            tiles: BTreeMap::new(),
            blobs: Vec::new(),
            blob_index: HashMap::new(),
            symbol_tables: Vec::new(),
            host_tensors: Vec::new(),
        })
    }

    pub fn machine(&self) -> &MachineFingerprint {
        &self.machine
    }

    pub fn regions(&self) -> &[SramRegion] {
        &self.regions
    }

    fn tile_mut(&mut self, tile: u32) -> Result<&mut BuilderTile, ImageError> {
        if tile >= self.machine.tiles {
            return Err(ImageError::TileOutOfRange {
                tile,
                machine: self.machine.name.clone(),
                tiles: self.machine.tiles,
            });
        }
        Ok(self.tiles.entry(tile).or_insert_with(|| BuilderTile {
            image: TileImage {
                tile,
                ..TileImage::default()
            },
            space: TileSpace::default(),
        }))
    }

    fn eligible_regions(&self, choice: &RegionChoice) -> Result<Vec<(u64, u64)>, ImageError> {
        match choice {
            RegionChoice::Any => Ok(self
                .regions
                .iter()
                .map(|r| (u64::from(r.start), r.end()))
                .collect()),
            RegionChoice::Named(name) => match self.regions.iter().find(|r| &r.name == name) {
                Some(region) => Ok(vec![(u64::from(region.start), region.end())]),
                None => Err(ImageError::NoSuchRegion {
                    name: name.clone(),
                    known: self
                        .regions
                        .iter()
                        .map(|r| r.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }),
            },
        }
    }

    /// Interns `bytes` as a blob, reusing an identical one.
    pub fn intern_blob(&mut self, bytes: &[u8]) -> BlobId {
        let mut hasher = DefaultHasher::new();
        bytes.hash(&mut hasher);
        let key = hasher.finish();
        let candidates = self.blob_index.entry(key).or_default();
        if let Some(&id) = candidates
            .iter()
            .find(|id| self.blobs[id.0 as usize] == bytes)
        {
            return id;
        }
        let id = BlobId(self.blobs.len() as u32);
        self.blobs.push(bytes.to_vec());
        candidates.push(id);
        id
    }

    fn add_segment(
        &mut self,
        tile: u32,
        address: u32,
        size: u32,
        blob: Option<BlobId>,
        category: SramCategory,
        name: &str,
    ) -> Result<(), ImageError> {
        if size == 0 {
            return Err(ImageError::BadSegment {
                tile,
                segment: name.into(),
                problem: "a segment must have at least one byte".into(),
            });
        }
        let base = self.machine.sram_base;
        let end = self.machine.sram_end();
        let start = u64::from(address);
        let stop = start + u64::from(size);
        if address < base || stop > end {
            return Err(ImageError::SegmentOutsideSram {
                tile,
                segment: name.into(),
                address,
                size: size.into(),
                base,
                end,
            });
        }
        let entry = self.tile_mut(tile)?;
        if let Some(used) = entry.space.overlap(start, stop) {
            let first = &entry.image.segments[used.segment];
            return Err(ImageError::SegmentOverlap {
                tile,
                first: first.name.clone(),
                first_address: first.address,
                first_end: first.end(),
                second: name.into(),
                second_address: address,
            });
        }
        let index = entry.image.segments.len();
        entry.space.insert(start, stop, index);
        entry.image.segments.push(Segment {
            name: name.into(),
            address,
            size,
            blob,
            category,
        });
        Ok(())
    }

    /// Reserves `[address, address + bytes)` on `tile` (zero-filled at load).
    pub fn place(
        &mut self,
        tile: u32,
        address: u32,
        bytes: u32,
        category: SramCategory,
        name: &str,
    ) -> Result<(), ImageError> {
        self.add_segment(tile, address, bytes, None, category, name)
    }

    /// Places `data` at `address` on `tile`.
    pub fn place_bytes(
        &mut self,
        tile: u32,
        address: u32,
        data: &[u8],
        category: SramCategory,
        name: &str,
    ) -> Result<(), ImageError> {
        let size = u32::try_from(data.len()).map_err(|_| ImageError::BadSegment {
            tile,
            segment: name.into(),
            problem: "larger than 4 GiB".into(),
        })?;
        let blob = self.intern_blob(data);
        self.add_segment(tile, address, size, Some(blob), category, name)
    }

    /// Places an already interned blob at `address` on `tile`.
    pub fn place_blob(
        &mut self,
        tile: u32,
        address: u32,
        blob: BlobId,
        category: SramCategory,
        name: &str,
    ) -> Result<(), ImageError> {
        let size = self
            .blobs
            .get(blob.0 as usize)
            .map(|b| b.len() as u32)
            .ok_or_else(|| ImageError::BadSegment {
                tile,
                segment: name.into(),
                problem: format!("blob {} does not exist", blob.0),
            })?;
        self.add_segment(tile, address, size, Some(blob), category, name)
    }

    /// Finds room for `bytes` at `align` on `tile` (first fit, regions in address order) and
    /// reserves it; returns the address. The refusal names the tile, the category, the bytes
    /// asked and the bytes free in the eligible regions.
    pub fn alloc(
        &mut self,
        tile: u32,
        category: SramCategory,
        name: &str,
        bytes: u32,
        align: u32,
        region: &RegionChoice,
    ) -> Result<u32, ImageError> {
        let address = self.find_room(tile, &category, bytes, align, region)?;
        self.add_segment(tile, address, bytes, None, category, name)?;
        Ok(address)
    }

    /// [`ImageBuilder::alloc`] with initial contents.
    pub fn alloc_bytes(
        &mut self,
        tile: u32,
        category: SramCategory,
        name: &str,
        data: &[u8],
        align: u32,
        region: &RegionChoice,
    ) -> Result<u32, ImageError> {
        let bytes = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let address = self.find_room(tile, &category, bytes, align, region)?;
        self.place_bytes(tile, address, data, category, name)?;
        Ok(address)
    }

    fn find_room(
        &mut self,
        tile: u32,
        category: &SramCategory,
        bytes: u32,
        align: u32,
        region: &RegionChoice,
    ) -> Result<u32, ImageError> {
        if align == 0 || !align.is_power_of_two() {
            return Err(ImageError::BadAlignment { align });
        }
        let regions = self.eligible_regions(region)?;
        let entry = self.tile_mut(tile)?;
        let wanted = u64::from(bytes.max(1));
        for &(lo, hi) in &regions {
            if let Some(address) = entry.space.first_fit(lo, hi, wanted, u64::from(align)) {
                return Ok(address as u32);
            }
        }
        let (free, largest) = regions.iter().fold((0, 0), |(free, largest), &(lo, hi)| {
            let (f, l) = entry.space.free(lo, hi);
            (free + f, largest.max(l))
        });
        Err(ImageError::InsufficientSram {
            bytes: bytes.into(),
            category: category.clone(),
            tile,
            free,
            largest,
        })
    }

    /// Free bytes and the largest free range of `tile` in the chosen regions.
    pub fn free_bytes(&self, tile: u32, region: &RegionChoice) -> Result<(u64, u64), ImageError> {
        let regions = self.eligible_regions(region)?;
        Ok(regions.iter().fold((0, 0), |(free, largest), &(lo, hi)| {
            let (f, l) = match self.tiles.get(&tile) {
                Some(entry) => entry.space.free(lo, hi),
                None => (hi - lo, hi - lo),
            };
            (free + f, largest.max(l))
        }))
    }

    /// Adds a symbol table (shared by the tiles that reference it).
    pub fn add_symbol_table(&mut self, table: SymbolTable) -> SymbolTableId {
        if let Some(index) = self.symbol_tables.iter().position(|t| *t == table) {
            return SymbolTableId(index as u32);
        }
        self.symbol_tables.push(table);
        SymbolTableId(self.symbol_tables.len() as u32 - 1)
    }

    /// Gives `tile` the symbols of a table.
    pub fn use_symbols(&mut self, tile: u32, table: SymbolTableId) -> Result<(), ImageError> {
        let entry = self.tile_mut(tile)?;
        if !entry.image.symbols.contains(&table) {
            entry.image.symbols.push(table);
        }
        Ok(())
    }

    /// Loads an assembled object on each of `tiles` at its assembled addresses: code sections get
    /// `rules.code`, other sections their override or `rules.data`; empty sections are skipped.
    /// The object's symbols become a table shared by those tiles. Contents are stored once.
    pub fn add_object(
        &mut self,
        tiles: &[u32],
        object: &Object,
        rules: &ObjectRules,
    ) -> Result<SymbolTableId, ImageError> {
        let table = SymbolTable {
            symbols: object
                .symbols
                .iter()
                .map(|(name, symbol)| (name.clone(), symbol.address))
                .collect(),
        };
        let table = self.add_symbol_table(table);
        let sections: Vec<(BlobId, u32, SramCategory, &str)> = object
            .sections
            .iter()
            .filter(|s| !s.bytes.is_empty())
            .map(|s| {
                (
                    self.intern_blob(&s.bytes),
                    s.address,
                    rules.category_of(&s.name, s.has_code),
                    s.name.as_str(),
                )
            })
            .collect();
        for &tile in tiles {
            for (blob, address, category, name) in &sections {
                self.place_blob(tile, *address, *blob, category.clone(), name)?;
            }
            self.use_symbols(tile, table)?;
        }
        Ok(table)
    }

    /// The address of `name` in `tile`'s symbol tables.
    pub fn symbol(&self, tile: u32, name: &str) -> Option<u32> {
        let entry = self.tiles.get(&tile)?;
        entry.image.symbols.iter().find_map(|id| {
            self.symbol_tables
                .get(id.0 as usize)?
                .symbols
                .get(name)
                .copied()
        })
    }

    /// Starts `tile`'s supervisor at `entry` with `$mvertex_base = vertex_base`.
    pub fn set_entry(&mut self, tile: u32, entry: u32, vertex_base: u32) -> Result<(), ImageError> {
        self.tile_mut(tile)?.image.entry = Some(TileEntry {
            supervisor: entry,
            vertex_base,
        });
        Ok(())
    }

    /// [`ImageBuilder::set_entry`] by symbol names (the vertex base is 0 without one).
    pub fn set_entry_symbol(
        &mut self,
        tile: u32,
        entry: &str,
        vertex: Option<&str>,
    ) -> Result<(), ImageError> {
        let resolve = |name: &str| {
            self.symbol(tile, name)
                .ok_or_else(|| ImageError::UnknownSymbol {
                    tile,
                    name: name.into(),
                })
        };
        let entry = resolve(entry)?;
        let vertex = vertex.map(resolve).transpose()?.unwrap_or(0);
        self.set_entry(tile, entry, vertex)
    }

    /// Sets `$WORKER0_BASE`..`$WORKER5_BASE` of `tile` at entry.
    pub fn set_worker_bases(
        &mut self,
        tile: u32,
        bases: [u32; WORKER_CONTEXTS],
    ) -> Result<(), ImageError> {
        self.tile_mut(tile)?.image.worker_bases = Some(bases);
        Ok(())
    }

    /// Allocates `bytes_per_worker` of scratch for each worker of `tile` (one `worker-scratch`
    /// segment, 8-byte aligned per worker) and sets the worker bases to it.
    pub fn alloc_worker_scratch(
        &mut self,
        tile: u32,
        bytes_per_worker: u32,
        region: &RegionChoice,
    ) -> Result<[u32; WORKER_CONTEXTS], ImageError> {
        let per_worker = bytes_per_worker.div_ceil(8).saturating_mul(8).max(8);
        let total = per_worker.saturating_mul(WORKER_CONTEXTS as u32);
        let base = self.alloc(
            tile,
            SramCategory::WorkerScratch,
            "worker scratch",
            total,
            8,
            region,
        )?;
        let bases = std::array::from_fn(|w| base + w as u32 * per_worker);
        self.set_worker_bases(tile, bases)?;
        Ok(bases)
    }

    /// Declares an input or output of the run; its pieces are checked in [`ImageBuilder::finish`].
    pub fn add_host_tensor(&mut self, tensor: HostTensor) -> Result<(), ImageError> {
        if self.host_tensors.iter().any(|t| t.name == tensor.name) {
            return Err(ImageError::BadTensor {
                name: tensor.name,
                problem: "declared twice".into(),
            });
        }
        self.host_tensors.push(tensor);
        Ok(())
    }

    /// The finished, validated image.
    pub fn finish(self) -> Result<Image, ImageError> {
        let tiles = self
            .tiles
            .into_values()
            .map(|entry| {
                let mut image = entry.image;
                image.segments.sort_by_key(|s| s.address);
                image
            })
            .collect();
        let image = Image {
            machine: self.machine,
            tiles,
            host_tensors: self.host_tensors,
            symbol_tables: self.symbol_tables,
            blobs: self.blobs,
        };
        image.validate()?;
        Ok(image)
    }
}
