import streamlit as st
st.write('dashboard')

from app.frame import page_guard

page_guard()
