//! Product points: named gates in the product's own code.

use std::fmt;
use std::sync::Arc;

use super::keyed::{Key, Keyed, ProductSlot};

/// A named point in a product's own async code, where a scenario can pause it: the product calls
/// [`pass`](ProductPoint::pass) there, and the scenario arms the name
/// ([`Gates::arm`](crate::gates::Gates::arm) with [`Point::product`](crate::gates::Point::product)
/// or the handle, or `gate = "product <name>"` on the attribute), waits until entered, does what must happen meanwhile, and releases it.
///
/// Made by [`Gates::product_point`](crate::gates::Gates::product_point) and handed to the product
/// (through its own hook trait, a constructor argument, ...). Cloning is cheap; every clone and
/// every handle made for the same name is the same point. The handle owns what it needs, so it
/// outlives the borrow of the gates it came from. An unarmed pass costs one atomic load: no
/// lock, no allocation.
///
/// ```
/// use harness_runtime::gates::Gates;
/// use std::time::Duration;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let gates = Gates::default();
/// let before_save = gates.product_point("before_save").unwrap(); // handed to the product
/// let gate = gates.arm(&before_save);
/// let product = async {
///     before_save.pass().await; // in the product's own code, before it saves
///     "saved"
/// };
/// let scenario = async {
///     gate.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
///     // Meanwhile: the product has not saved yet; change what it will meet.
///     gate.release();
/// };
/// let (saved, ()) = tokio::join!(product, scenario);
/// assert_eq!(saved, "saved");
/// # });
/// ```
#[derive(Clone)]
pub struct ProductPoint {
    slot: Arc<ProductSlot>,
    gates: Arc<Keyed>,
}

impl ProductPoint {
    pub(super) fn new(slot: Arc<ProductSlot>, gates: Arc<Keyed>) -> ProductPoint {
        ProductPoint { slot, gates }
    }

    /// Passes the point: returns at once unless a gate is armed for this pass (counted from the
    /// moment the name was armed), in which case it enters the gate and waits for the release.
    /// In an exploring scenario (`explore = N`) the pass is a decision point first: it waits
    /// until the scheduler lets it go.
    pub async fn pass(&self) {
        if let Some(scheduler) = self.gates.scheduler() {
            scheduler.product(self.slot.name()).await;
        }
        if !self.slot.is_armed() {
            return;
        }
        let name = self.slot.name();
        self.gates
            .pass_where(|key| matches!(key, Key::Product(armed) if armed == name))
            .await;
    }

    /// The point's name (`before_save`).
    pub fn name(&self) -> &str {
        self.slot.name()
    }
}

impl fmt::Debug for ProductPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProductPoint")
            .field("name", &self.slot.name())
            .field("armed", &self.slot.is_armed())
            .finish()
    }
}
