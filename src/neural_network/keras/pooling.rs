//! Keras's pooling configs: `MaxPooling`/`AveragePooling` 1D-3D ([`PoolSpec`]) and their global
//! forms ([`GlobalPoolSpec`]), channels-last only.

use super::convolution::parse_padding;
use super::layer_spec::SpatialArg;
use crate::error::{Error, Result};
use crate::neural_network::traits::Layer;
use serde::{Deserialize, Serialize};

// ---- pooling family -------------------------------------------------------------------------

/// A pooling config's input: channels last (the only layout supported), and `[spatial..,
/// channels]` per sample with `rank` spatial axes.
pub(crate) fn check_pool_input(
    data_format: &Option<String>,
    sample: &[usize],
    rank: usize,
    layer: &str,
) -> Result<()> {
    if let Some(other) = data_format.as_deref().filter(|&f| f != "channels_last") {
        return Err(Error::invalid_parameter(
            "data_format",
            format!("{layer}: only channels_last is supported, got {other:?}"),
        ));
    }
    if sample.len() != rank + 1 {
        return Err(Error::invalid_input(format!(
            "{layer} expects inputs with {rank} spatial axes and a channel axis (per-sample rank {}), got per-sample shape {sample:?}",
            rank + 1
        )));
    }
    Ok(())
}

/// Config of MaxPooling / AveragePooling 1D-3D.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct PoolSpec {
    pub pool_size: SpatialArg,
    #[serde(default)]
    pub strides: Option<SpatialArg>,
    #[serde(default)]
    pub padding: Option<String>,
    #[serde(default)]
    pub data_format: Option<String>,
}

impl PoolSpec {
    pub(crate) fn build<const N: usize, const MAX: bool>(
        &self,
        sample: &[usize],
    ) -> Result<Box<dyn Layer>> {
        use crate::neural_network::layers::pooling::Pooling;
        let name = Pooling::<N, MAX>::NAME;
        check_pool_input(&self.data_format, sample, N, name)?;
        let padding = parse_padding(self.padding.as_deref(), name)?;
        let fixed = |arg: &SpatialArg, what: &str| -> Result<[usize; N]> {
            Ok(arg
                .per_axis(N, what, name)?
                .try_into()
                .expect("per_axis gives N entries"))
        };
        let pool = fixed(&self.pool_size, "pool_size")?;
        let strides = self
            .strides
            .as_ref()
            .map(|s| fixed(s, "strides"))
            .transpose()?;
        let mut shape = vec![1];
        shape.extend_from_slice(sample);
        Ok(Box::new(Pooling::<N, MAX>::with_config(
            pool, strides, padding, shape,
        )?))
    }
}

/// Config of GlobalMaxPooling / GlobalAveragePooling 1D-3D.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct GlobalPoolSpec {
    #[serde(default)]
    pub keepdims: bool,
    #[serde(default)]
    pub data_format: Option<String>,
}

impl GlobalPoolSpec {
    pub(crate) fn build<const N: usize, const MAX: bool>(
        &self,
        sample: &[usize],
    ) -> Result<Box<dyn Layer>> {
        use crate::neural_network::layers::pooling::GlobalPooling;
        let name = GlobalPooling::<N, MAX>::NAME;
        check_pool_input(&self.data_format, sample, N, name)?;
        Ok(Box::new(
            GlobalPooling::<N, MAX>::new().with_keepdims(self.keepdims),
        ))
    }
}
