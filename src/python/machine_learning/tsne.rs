//! Native `TSNE`.

use super::auto_or_value;
use crate::machine_learning::tsne::GivenDistances;
use crate::machine_learning::{LearningRate, TsneInit, TsneMethod, TSNE};
use crate::python::model::native_estimator;
use crate::python::params::{self, required_count};
use crate::python::to_py_err;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

fn parse_learning_rate(obj: &Bound<'_, PyAny>) -> PyResult<LearningRate> {
    let expected = "'auto' or a number > 0";
    if let Some(auto) = auto_or_value(obj, "learning_rate", LearningRate::Auto, expected, expected)?
    {
        return Ok(auto);
    }
    obj.extract::<f64>()
        .map(LearningRate::Fixed)
        .map_err(|_| PyTypeError::new_err("learning_rate must be 'auto' or a number > 0"))
}

native_estimator! {
    PyTSNE(TSNE, "TSNE");
    new(
        n_components: &Bound<'_, PyAny>,
        perplexity: f64,
        early_exaggeration: f64,
        learning_rate: &Bound<'_, PyAny>,
        max_iter: &Bound<'_, PyAny>,
        n_iter_without_progress: &Bound<'_, PyAny>,
        min_grad_norm: f64,
        method: &str,
        init: &str,
        angle: f64,
        random_state: Option<&Bound<'_, PyAny>>,
    ) {
        Ok(TSNE::builder(required_count(n_components, "n_components")?)
            .with_perplexity(perplexity)
            .with_early_exaggeration(early_exaggeration)
            .with_learning_rate(parse_learning_rate(learning_rate)?)
            .with_max_iter(required_count(max_iter, "max_iter")?)
            .with_n_iter_without_progress(required_count(
                n_iter_without_progress,
                "n_iter_without_progress",
            )?)
            .with_min_grad_norm(min_grad_norm)
            .with_tsne_method(TsneMethod::parse(method).map_err(to_py_err)?)
            .with_tsne_init(TsneInit::parse(init).map_err(to_py_err)?)
            .with_angle(angle)
            .with_seed(params::random_state(random_state)?))
    }
    fit(x) => |m, x| m.fit(&x).map(|_| ());
    write fit_transform => |m, x| m.fit_transform_checked(&x);
    fitted embedding_ => |m| m.embedding().cloned();
    fitted kl_divergence_ => |m| m.kl_divergence();
    fitted n_iter_ => |m| m.n_iter();
    fitted learning_rate_ => |m| m.learning_rate_used();
    {
        /// Fit from a given initial embedding, its rows flattened.
        fn fit_transform_from<'py>(
            &self,
            py: Python<'py>,
            x: &Bound<'py, PyAny>,
            init: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyAny>> {
            self.inner
                .write_xy(py, x, init, |m, x, init| m.fit_transform_from(&x, init))
        }

        /// Fit from all pairs' squared distances (`n x n`, method `exact`) and a given
        /// initial embedding, its rows flattened.
        fn fit_transform_given_dense<'py>(
            &self,
            py: Python<'py>,
            distances: &Bound<'py, PyAny>,
            init: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyAny>> {
            self.inner.write_xy(py, distances, init, |m, d2, init| {
                m.fit_transform_given(GivenDistances::Dense(d2), Some(init))
            })
        }

        /// Fit from the nearest neighbours (`n x k` indices and their squared distances,
        /// method `barnes_hut`) and a given initial embedding, its rows flattened.
        fn fit_transform_given_neighbours<'py>(
            &self,
            py: Python<'py>,
            indices: numpy::PyReadonlyArray2<'py, i64>,
            distances: &Bound<'py, PyAny>,
            init: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let given = indices.as_array();
            if given.iter().any(|&j| j < 0) {
                return Err(PyValueError::new_err("indices holds a negative entry"));
            }
            let indices = given.mapv(|j| j as usize);
            let iv = indices.view();
            self.inner.write_xy(py, distances, init, move |m, d2, init| {
                m.fit_transform_given(
                    GivenDistances::Neighbours {
                        indices: iv,
                        distances: d2,
                    },
                    Some(init),
                )
            })
        }
    }
}
