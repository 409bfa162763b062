import streamlit as st
st.write('calibration')

from app.frame import page_guard

page_guard()
