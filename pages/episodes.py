import streamlit as st
st.write('episodes')

from app.frame import page_guard

page_guard()
