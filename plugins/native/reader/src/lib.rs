//! `socair-native`: the native model files of gradient-boosting and JAX libraries, read
//! strictly as data, without the libraries: XGBoost's JSON and UBJSON models and the memory
//! snapshot a pickled `Booster` holds ([`xgboost`]), LightGBM's text models ([`lightgbm`]) and
//! Flax's msgpack state dicts ([`flax`]). Each module mirrors its library's own loader at a
//! pinned version (cited in the module) and is pure over a byte slice, filling a
//! [`model_read::ModelRead`]. A library shared by the `native` plugin and the pickle profiles
//! (`socair-sklearn/1` reads the model inside a pickled XGBoost or LightGBM `Booster`).
//!
//! CatBoost's `.cbm` (a FlatBuffers model) is the catboost plugin's (`plugins/catboost/`).

pub mod flax;
pub mod fuzzing;
pub mod lightgbm;
pub mod model_read;
pub mod xgboost;
