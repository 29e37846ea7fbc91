//! `socair-native`: the native model files of gradient-boosting and JAX libraries, read
//! strictly as data, without the libraries: XGBoost's JSON and UBJSON models and the memory
//! snapshot a pickled `Booster` holds ([`xgboost`]), LightGBM's text models ([`lightgbm`]) and
//! Flax's msgpack state dicts ([`flax`]). Each module mirrors its library's own loader at a
//! pinned version (cited in the module) and is pure over a byte slice, filling a
//! [`model_read::ModelRead`]. A library shared by the `native` plugin and the pickle profiles
//! (`socair-sklearn/1` reads the model inside a pickled XGBoost or LightGBM `Booster`).
//!
//! CatBoost's `.cbm` is not read: it is a FlatBuffers model (`CBM1` magic, a length, then a
//! `TModelCore` table from `catboost/libs/model/flatbuffers/model.fbs`) whose trees, borders
//! and embedded feature calcers (text and embedding processing, themselves serialized
//! blobs) would need the whole schema; it stays a file no reader claims.

pub mod flax;
pub mod fuzzing;
pub mod lightgbm;
pub mod model_read;
pub mod xgboost;
